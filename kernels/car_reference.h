#pragma once
// Host reference for the custom all-reduce (tests and specsim-arbench): bf16/fp16 conversions
// (round to nearest even), deterministic random inputs (never zero), inputs full of special bit
// patterns (NaNs including the flag-free kernels' reserved value, infinities, signed zeros,
// subnormals), and the expected output computed the way the kernels do it (fp32 sum in rank
// order 0..world-1, rounded once, a NaN sum written as the type's canonical NaN), so results
// compare bitwise. Header-only, plain C++.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "car_types.h"

namespace specsim::car::ref {

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
  if (a < 0x38800000u) {                       // below 2^-14: subnormal half
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

  std::size_t bytes() const { return count * elem_bytes(dtype); }
};

/// Element i of rank r's input as float (exact).
inline float input_value(const Problem& p, int r, std::size_t i) {
  const unsigned char* src = p.in[static_cast<std::size_t>(r)].data();
  if (p.dtype == DType::FP32) {
    float f;
    std::memcpy(&f, src + 4 * i, 4);
    return f;
  }
  std::uint16_t h;
  std::memcpy(&h, src + 2 * i, 2);
  return p.dtype == DType::BF16 ? bf16_to_float(h) : half_to_float(h);
}

/// Fills p.ref from p.in: fp32 sum in rank order, rounded once; a NaN sum becomes the canonical
/// NaN (bf16/fp16 0x7fff, fp32 0x7fffffff), as the kernels write it.
inline void compute_reference(Problem& p) {
  const std::size_t eb = elem_bytes(p.dtype);
  p.ref.assign(p.count * eb, 0);
  for (std::size_t i = 0; i < p.count; ++i) {
    float acc = input_value(p, 0, i);
    for (int r = 1; r < p.world; ++r) acc += input_value(p, r, i);
    if (p.dtype == DType::FP32) {
      const std::uint32_t b = std::isnan(acc) ? 0x7fffffffu : bits(acc);
      std::memcpy(p.ref.data() + 4 * i, &b, 4);
    } else {
      const std::uint16_t h = std::isnan(acc)          ? std::uint16_t{0x7fff}
                              : p.dtype == DType::BF16 ? float_to_bf16(acc)
                                                       : float_to_half(acc);
      std::memcpy(p.ref.data() + 2 * i, &h, 2);
    }
  }
}

/// Deterministic from `seed`, so every process of a multi-process test builds the same problem.
/// Values are uniform in [-1, 1) and never zero.
/// Throws std::invalid_argument for a dtype the kernels do not run (fp8).
inline Problem make_problem(DType dt, int world, std::size_t count, std::uint64_t seed) {
  if (!is_kernel_dtype(dt))
    throw std::invalid_argument(dt == DType::FP8 ? "car::ref: no fp8 reference (the kernels run bf16, fp16 and fp32)"
                                                 : "car::ref: unknown dtype value");
  Problem p{dt, world, count, {}, {}};
  const std::size_t eb = elem_bytes(dt);
  p.in.assign(static_cast<std::size_t>(world), std::vector<unsigned char>(count * eb));
  for (int r = 0; r < world; ++r) {
    std::uint64_t s = seed * 1000003ull + static_cast<std::uint64_t>(r) * 7919ull + 1;
    unsigned char* dst = p.in[static_cast<std::size_t>(r)].data();
    for (std::size_t i = 0; i < count; ++i) {
      float v = static_cast<float>(static_cast<double>(splitmix(s) >> 11) * 0x1.0p-52 - 1.0);
      if (v == 0.0f) v = 0.5f;
      if (dt == DType::FP32) {
        std::memcpy(dst + 4 * i, &v, 4);
      } else {
        std::uint16_t h = dt == DType::BF16 ? float_to_bf16(v) : float_to_half(v);
        if ((h & 0x7fffu) == 0) h = dt == DType::BF16 ? float_to_bf16(0.5f) : float_to_half(0.5f);
        std::memcpy(dst + 2 * i, &h, 2);
      }
    }
  }
  compute_reference(p);
  return p;
}

/// Bit patterns that stress the kernels' arithmetic and the flag-free variants' reserved value:
/// per dtype the reserved value itself (all bits set), other NaNs, infinities, signed zeros,
/// subnormals and the largest finite values.
inline std::vector<std::uint32_t> special_patterns(DType dt) {
  if (dt == DType::FP32)
    return {0xffffffffu, 0x7fffffffu, 0x7fc00000u, 0xffc00001u, 0x7f800000u, 0xff800000u, 0x00000000u,
            0x80000000u, 0x00000001u, 0x80000003u, 0x7f7fffffu, 0xff7fffffu, 0x3f800000u, 0xbf800000u};
  if (dt == DType::BF16)
    return {0xffff, 0x7fff, 0x7fc0, 0xffc1, 0x7f80, 0xff80, 0x0000,
            0x8000, 0x0001, 0x8003, 0x7f7f, 0xff7f, 0x3f80, 0xbf80};
  return {0xffff, 0x7fff, 0x7e00, 0xfe01, 0x7c00, 0xfc00, 0x0000,
          0x8000, 0x0001, 0x8003, 0x7bff, 0xfbff, 0x3c00, 0xbc00};
}

/// Like make_problem, but about one element in four of each rank is a special pattern (the
/// reserved value among them in every rank), the rest random; some elements are special on
/// every rank (all -0.0: the sum must stay -0.0; all reserved: canonical NaN).
inline Problem make_special_problem(DType dt, int world, std::size_t count, std::uint64_t seed) {
  Problem p = make_problem(dt, world, count, seed);
  const auto pats = special_patterns(dt);
  const std::size_t eb = elem_bytes(dt);
  std::uint64_t s = seed ^ 0x5eed5eedull;
  auto put = [&](int r, std::size_t i, std::uint32_t pat) {
    std::memcpy(p.in[static_cast<std::size_t>(r)].data() + eb * i, &pat, eb);  // little-endian low bytes
  };
  for (int r = 0; r < world; ++r)
    for (std::size_t i = 0; i < count; ++i)
      if (splitmix(s) % 4 == 0) put(r, i, pats[splitmix(s) % pats.size()]);
  for (int r = 0; r < world; ++r) {
    put(r, 0, pats[0]);                         // the reserved value on every rank
    if (count > 1) put(r, 1, pats[7]);          // -0.0 on every rank
    if (count > 2) put(r, count - 1, pats[0]);  // in the last (partial) vector too
  }
  compute_reference(p);
  return p;
}

/// Byte pattern written to outputs before each call: NaN in every dtype.
inline constexpr int kPoison = 0xff;

/// Number of elements whose bytes differ from the reference (bitwise compare).
inline std::size_t count_wrong(const Problem& p, const std::vector<unsigned char>& got) {
  const std::size_t eb = elem_bytes(p.dtype);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < p.count; ++i)
    if (std::memcmp(got.data() + i * eb, p.ref.data() + i * eb, eb) != 0) ++wrong;
  return wrong;
}

}  // namespace specsim::car::ref
