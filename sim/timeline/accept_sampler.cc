#include "timeline/accept_sampler.h"

#include <fmt/format.h>

#include <algorithm>

#include "accept/accept_len.h"

namespace specsim {

AcceptSampler AcceptSampler::chain(double a, int depth, std::uint64_t seed) {
  AcceptSampler s;
  s.rng_.seed(seed);
  s.depth_ = std::max(1, depth);
  s.rates_ = {std::clamp(a, 0.0, 1.0)};
  s.describe_ = fmt::format("chain model, per-token acceptance {:.3f} over {} draft tokens (mean accept len {:.3f})", a,
                            s.depth_, chain_accept_len(a, s.depth_));
  return s;
}

AcceptSampler AcceptSampler::empirical(std::vector<double> accept_lens, int depth, std::uint64_t seed) {
  AcceptSampler s;
  s.rng_.seed(seed);
  s.depth_ = std::max(1, depth);
  double sum = 0;
  if (accept_lens.empty()) accept_lens.push_back(1.0);  // callers refuse empty logs; never UB here
  for (double m : accept_lens) {
    const double clamped = std::clamp(m, 1.0, s.depth_ + 1.0);
    s.rates_.push_back(chain_accept_rate(clamped, s.depth_));
    sum += clamped;
  }
  s.describe_ =
      fmt::format("empirical: {} logged accept-len means (mean {:.3f}), each cycle the chain model at one of them",
                  accept_lens.size(), sum / static_cast<double>(accept_lens.size()));
  return s;
}

double AcceptSampler::uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

int AcceptSampler::draw() {
  double a = rates_.front();
  if (rates_.size() > 1) {
    const auto i = static_cast<std::size_t>(uniform() * static_cast<double>(rates_.size()));
    a = rates_[std::min(i, rates_.size() - 1)];
  }
  int len = 1;  // the bonus token is always emitted
  while (len <= depth_ && uniform() < a) ++len;
  return len;
}

}  // namespace specsim
