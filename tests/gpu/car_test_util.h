#pragma once
// Helpers shared by the custom all-reduce GPU tests: a check counter that makes any mismatch
// a non-zero exit, the skip convention (exit 77 with a reason), GPU_CHECK (cuda_check.h: a failed
// CUDA call throws, and each test's main turns that into FAIL and exit 1), host bf16/fp16 conversions,
// deterministic random inputs (never zero) and the CPU reference in the kernels' fixed order.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "car_reference.h"
#include "cuda_check.h"
#include "custom_allreduce.h"

namespace cartest {

using namespace specsim::car::ref;

using specsim::car::DType;
using specsim::car::Variant;

/// Exit code ctest reads as "skipped" (SKIP_RETURN_CODE).
inline constexpr int kSkip = 77;

/// Counts checks and failures; prints the first few failures.
struct Checker {
  long checks = 0;
  long failures = 0;
  /// Records one check; prints `what` when it fails (first 30 only).
  bool expect(bool ok, const std::string& what) {
    ++checks;
    if (!ok) {
      if (failures < 30) std::fprintf(stderr, "FAIL: %s\n", what.c_str());
      ++failures;
    }
    return ok;
  }
  /// Prints the summary line; returns the process exit code.
  int finish(const char* name) const {
    std::printf("%s: %ld checks, %ld failures\n", name, checks, failures);
    return failures == 0 ? 0 : 1;
  }
};

/// Number of CUDA devices; prints `SKIP: ...` and exits 77 when there are fewer than `need`.
inline int devices_or_skip(int need, const char* test) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
  if (n == 0) {
    std::printf("SKIP: no CUDA device found (%s)\n", test);
    std::exit(kSkip);
  }
  if (n < need) {
    std::printf("SKIP: %s needs %d CUDA devices, found %d\n", test, need, n);
    std::exit(kSkip);
  }
  return n;
}

/// Element counts covering 16 B .. 8 MiB, odd sizes included (tails of 1..7 elements).
inline std::vector<std::size_t> sweep_counts(DType dt, bool quick) {
  const std::size_t eb = specsim::car::elem_bytes(dt);
  std::vector<std::size_t> c;
  if (quick) {
    for (std::size_t n :
         {std::size_t{16} / eb, std::size_t{9}, std::size_t{1001}, std::size_t{43008} / eb, std::size_t{65537}})
      c.push_back(n);
    return c;
  }
  for (std::size_t b : {16, 48, 1024, 14336, 43008, 57344, 114688, 1 << 20, 8 << 20}) c.push_back(b / eb);
  for (std::size_t n : {1, 3, 9, 1001, 12345, 777777}) c.push_back(n);
  c.push_back((std::size_t{8} << 20) / eb - 3);
  return c;
}

inline const char* name(Variant v) { return specsim::car::to_string(v).data(); }
inline const char* name(DType d) { return specsim::dtype_name(d).data(); }

}  // namespace cartest
