#pragma once
// CPU reference of the fused all-reduce + residual add + RMSNorm (tests and specsim-arbench):
// residuals and weights, the new residual computed exactly as the kernels do (bitwise), the norm
// in double (the kernels' fp32 sum of squares and rsqrt differ from it by rounding: compare
// within `norm_tolerance`), and fp8 e4m3 (nearest even, saturating) for the quantized copy.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "car_reference.h"
#include "car_types.h"

namespace specsim::car::ref {

/// Element i of a bf16/fp16 buffer as float.
inline float load16(const std::vector<unsigned char>& b, std::size_t i, DType dt) {
  std::uint16_t h;
  std::memcpy(&h, b.data() + 2 * i, 2);
  return dt == DType::BF16 ? bf16_to_float(h) : half_to_float(h);
}
/// float rounded to bf16/fp16 bits (nearest even); a NaN as the canonical NaN, as the kernels.
inline std::uint16_t round16(float f, DType dt) {
  if (std::isnan(f)) return 0x7fff;
  return dt == DType::BF16 ? float_to_bf16(f) : float_to_half(f);
}

/// fp8 e4m3 (bias 7, no infinities, 0x7f NaN, max 448) of `x`: nearest even, saturating to +-448.
inline std::uint8_t to_e4m3(float x) {
  if (std::isnan(x)) return 0x7f;
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const double a = std::fabs(static_cast<double>(x));
  auto value = [](int code) {  // positive code 0..126
    const int e = code >> 3, m = code & 7;
    return e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
  };
  if (a >= 448.0) return sign | 0x7e;
  int best = 0;
  for (int c = 1; c <= 126; ++c) {
    const double d = std::fabs(value(c) - a), db = std::fabs(value(best) - a);
    if (d < db || (d == db && (c & 1) == 0 && (best & 1) == 1)) best = c;
  }
  return static_cast<std::uint8_t>(sign | best);
}

/// One fused problem: the all-reduce problem (inputs, rounded sums) plus residual and weight.
struct FusedProblem {
  Problem ar;
  std::size_t tokens = 0, hidden = 0;
  float eps = 1e-6f;
  std::vector<unsigned char> residual, weight;  ///< the same on every rank
  std::vector<unsigned char> new_residual;      ///< expected residual_out (bitwise)
  std::vector<double> norm;                     ///< expected norm output before rounding (double)
};

/// Deterministic from `seed`; inputs in [-1, 1), residual in [-1, 1), weight in [0.5, 1.5).
inline FusedProblem make_fused_problem(DType dt, int world, std::size_t tokens, std::size_t hidden,
                                       std::uint64_t seed) {
  FusedProblem p;
  p.ar = make_problem(dt, world, tokens * hidden, seed);
  p.tokens = tokens;
  p.hidden = hidden;
  const auto res = make_problem(dt, 1, tokens * hidden, seed + 77);
  const auto w = make_problem(dt, 1, hidden, seed + 99);
  p.residual = res.in[0];
  p.weight.resize(hidden * 2);
  for (std::size_t c = 0; c < hidden; ++c) {
    const std::uint16_t h = round16(1.0f + 0.5f * load16(w.in[0], c, dt), dt);
    std::memcpy(p.weight.data() + 2 * c, &h, 2);
  }
  p.new_residual.resize(tokens * hidden * 2);
  p.norm.resize(tokens * hidden);
  for (std::size_t t = 0; t < tokens; ++t) {
    double ss = 0;
    for (std::size_t c = 0; c < hidden; ++c) {
      const std::size_t i = t * hidden + c;
      const float r = load16(p.residual, i, dt) + load16(p.ar.ref, i, dt);  // one fp32 add, as the kernel
      const std::uint16_t h = round16(r, dt);
      std::memcpy(p.new_residual.data() + 2 * i, &h, 2);
      const double x = load16(p.new_residual, i, dt);
      ss += x * x;
    }
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(hidden) + p.eps);
    for (std::size_t c = 0; c < hidden; ++c) {
      const std::size_t i = t * hidden + c;
      p.norm[i] = load16(p.new_residual, i, dt) * inv * load16(p.weight, c, dt);
    }
  }
  return p;
}

/// Whether a kernel's norm output `got` is within 2 units in the last place of T of the exact value.
inline bool norm_within(float got, double want, DType dt) {
  const double ulp_rel = dt == DType::BF16 ? std::ldexp(1.0, -7) : std::ldexp(1.0, -10);
  const double tiny = dt == DType::BF16 ? 1e-30 : std::ldexp(1.0, -23);
  return std::fabs(static_cast<double>(got) - want) <= 2.0 * ulp_rel * std::fabs(want) + tiny;
}

}  // namespace specsim::car::ref
