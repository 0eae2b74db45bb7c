#include "cost/replay_fp8_cost.h"

#include <algorithm>
#include <cmath>

namespace specsim {

ReplayGemmDims replay_gemm_dims(const Op& op) {
  const auto one = [](double v) { return std::max<std::int64_t>(1, std::llround(v)); };
  ReplayGemmDims d;
  d.n = one(op.n), d.k = one(op.k);
  if (op.kind == OpKind::MoeGemm) {
    d.batch = one(op.experts);
    d.m = std::max<std::int64_t>(1, std::int64_t(std::ceil(op.m / double(d.batch))));
  } else {
    d.batch = one(op.batch), d.m = one(op.m);
  }
  return d;
}

int replay_fp8_m_class(std::int64_t m) { return m <= 8 ? 0 : m <= 16 ? 1 : m <= 32 ? 2 : 3; }

std::array<double, kReplayFp8Terms> replay_fp8_terms(const ReplayGemmDims& d) {
  // above 64 tokens the kernel runs passes of 64, each reading W again
  const double passes = d.m > 64 ? std::ceil(double(d.m) / 64) : 1.0;
  const double mb = double(d.batch) * double(d.n) * double(d.k) / 1e6;
  std::array<double, kReplayFp8Terms> t{};
  t[0] = 1;
  t[1 + replay_fp8_m_class(d.m)] = mb * passes;
  t[5] = double(d.batch) * std::ceil(double(d.n) / 16) / 1000 * passes;
  t[6] = std::ceil(double(d.k) / 128);
  return t;
}

double replay_fp8_us(const ReplayFp8Kernel& f, const ReplayGemmDims& d) {
  const auto t = replay_fp8_terms(d);
  double us = 0;
  for (int i = 0; i < kReplayFp8Terms; ++i) us += f.coef[i] * t[i];
  return us;
}

}  // namespace specsim
