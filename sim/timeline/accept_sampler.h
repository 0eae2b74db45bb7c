#pragma once
// Accepted length per cycle, drawn from a distribution: the chain model at a per-token rate, or a
// mixture over measured interval means (SGLang logs). Own arithmetic on std::mt19937_64 so a seed
// gives the same draws on every standard library (std:: distributions are not portable).
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace specsim {

class AcceptSampler {
 public:
  /// Chain speculation: draft token j is accepted with rate `a` if all before it were; `depth`
  /// draft tokens; accept len = accepted + 1 (the bonus token). Mean = chain_accept_len(a, depth).
  static AcceptSampler chain(double a, int depth, std::uint64_t seed);
  /// Each cycle picks one logged accept-len mean uniformly, then draws from the chain model at
  /// the rate with that mean (logs hold interval averages, not per-cycle values).
  static AcceptSampler empirical(std::vector<double> accept_lens, int depth, std::uint64_t seed);

  /// Accept len of one request in one cycle: an integer in [1, depth + 1].
  int draw();
  /// Uniform in [0, 1) from the top 53 bits.
  double uniform();
  /// In words, for the report.
  const std::string& describe() const { return describe_; }

 private:
  std::mt19937_64 rng_;
  int depth_ = 1;
  std::vector<double> rates_;  ///< one per logged mean (empirical) or just one (chain)
  std::string describe_;
};

}  // namespace specsim
