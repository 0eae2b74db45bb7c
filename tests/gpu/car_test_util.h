#pragma once
// Helpers shared by the custom all-reduce GPU tests: a check counter that makes any mismatch
// a non-zero exit, the skip convention (exit 77 with a reason), host bf16/fp16 conversions,
// deterministic random inputs (never zero) and the CPU reference in the kernels' fixed order.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "custom_allreduce.h"

namespace cartest {

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

/// Aborts the test (exit 1) on a CUDA error: setup failures are not skips.
inline void cuda_or_die(cudaError_t e, const char* what, int line) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "FAIL: %s (line %d): %s\n", what, line, cudaGetErrorString(e));
    std::exit(1);
  }
}
#define CT_CUDA(call) ::cartest::cuda_or_die((call), #call, __LINE__)

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

// ---------------------------------------------------------------- host conversions
inline std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline float bf16_to_float(std::uint16_t h) { return from_bits(static_cast<std::uint32_t>(h) << 16); }
/// Round to nearest even (no NaN inputs here).
inline std::uint16_t float_to_bf16(float f) {
  const std::uint32_t x = bits(f);
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return from_bits(sign | 0x7f800000u | (mant << 13));
  return from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
}
/// Round to nearest even, subnormals and overflow included.
inline std::uint16_t float_to_half(float f) {
  const std::uint32_t x = bits(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return sign | (a > 0x7f800000u ? 0x7e00 : 0x7c00);
  if (a >= 0x477ff000u) return sign | 0x7c00;  // >= 65520 rounds to infinity
  if (a < 0x38800000u) {                        // below 2^-14: subnormal half
    const auto m = static_cast<std::uint32_t>(std::nearbyint(std::fabs(f) * 16777216.0f));
    return static_cast<std::uint16_t>(sign | m);
  }
  const std::uint32_t mant = a & 0x7fffffu;
  std::uint32_t h = (((a >> 23) - 112u) << 10) | (mant >> 13);
  const std::uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

// ---------------------------------------------------------------- data
inline std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// One all-reduce problem: `world` inputs of `count` elements as raw bytes, and the expected
/// output (fp32 sum in rank order, rounded once), as the kernels compute it.
struct Problem {
  DType dtype;
  int world;
  std::size_t count;
  std::vector<std::vector<unsigned char>> in;  ///< per rank
  std::vector<unsigned char> ref;              ///< expected output bytes

  std::size_t bytes() const { return count * specsim::car::dtype_bytes(dtype); }
};

/// Deterministic from `seed`, so every process of a multi-process test builds the same problem.
/// Values are uniform in [-1, 1) and never zero.
inline Problem make_problem(DType dt, int world, std::size_t count, std::uint64_t seed) {
  Problem p{dt, world, count, {}, {}};
  const std::size_t eb = specsim::car::dtype_bytes(dt);
  p.in.assign(static_cast<std::size_t>(world), std::vector<unsigned char>(count * eb));
  std::vector<float> acc(count, 0.0f);
  for (int r = 0; r < world; ++r) {
    std::uint64_t s = seed * 1000003ull + static_cast<std::uint64_t>(r) * 7919ull + 1;
    unsigned char* dst = p.in[static_cast<std::size_t>(r)].data();
    for (std::size_t i = 0; i < count; ++i) {
      float v = static_cast<float>(static_cast<double>(splitmix(s) >> 11) * 0x1.0p-52 - 1.0);
      if (v == 0.0f) v = 0.5f;
      float stored;
      if (dt == DType::FP32) {
        stored = v;
        std::memcpy(dst + 4 * i, &stored, 4);
      } else {
        std::uint16_t h = dt == DType::BF16 ? float_to_bf16(v) : float_to_half(v);
        if ((h & 0x7fffu) == 0) h = dt == DType::BF16 ? float_to_bf16(0.5f) : float_to_half(0.5f);
        stored = dt == DType::BF16 ? bf16_to_float(h) : half_to_float(h);
        std::memcpy(dst + 2 * i, &h, 2);
      }
      acc[i] = r == 0 ? stored : acc[i] + stored;  // rank order, fp32, as the kernels
    }
  }
  p.ref.resize(count * eb);
  for (std::size_t i = 0; i < count; ++i) {
    if (dt == DType::FP32) {
      std::memcpy(p.ref.data() + 4 * i, &acc[i], 4);
    } else {
      const std::uint16_t h = dt == DType::BF16 ? float_to_bf16(acc[i]) : float_to_half(acc[i]);
      std::memcpy(p.ref.data() + 2 * i, &h, 2);
    }
  }
  return p;
}

/// Byte pattern written to outputs before each call: NaN in every dtype.
inline constexpr int kPoison = 0xff;

/// Number of elements whose bytes differ from the reference (bitwise compare).
inline std::size_t count_wrong(const Problem& p, const std::vector<unsigned char>& got) {
  const std::size_t eb = specsim::car::dtype_bytes(p.dtype);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < p.count; ++i)
    if (std::memcmp(got.data() + i * eb, p.ref.data() + i * eb, eb) != 0) ++wrong;
  return wrong;
}

/// Element counts covering 16 B .. 8 MiB, odd sizes included (tails of 1..7 elements).
inline std::vector<std::size_t> sweep_counts(DType dt, bool quick) {
  const std::size_t eb = specsim::car::dtype_bytes(dt);
  std::vector<std::size_t> c;
  if (quick) {
    for (std::size_t n : {std::size_t{16} / eb, std::size_t{9}, std::size_t{1001},
                          std::size_t{43008} / eb, std::size_t{65537}})
      c.push_back(n);
    return c;
  }
  for (std::size_t b : {16, 48, 1024, 14336, 43008, 57344, 114688, 1 << 20, 8 << 20})
    c.push_back(b / eb);
  for (std::size_t n : {1, 3, 9, 1001, 12345, 777777}) c.push_back(n);
  c.push_back((std::size_t{8} << 20) / eb - 3);
  return c;
}

inline const char* name(Variant v) { return specsim::car::to_string(v).data(); }
inline const char* name(DType d) { return specsim::car::to_string(d).data(); }

}  // namespace cartest
