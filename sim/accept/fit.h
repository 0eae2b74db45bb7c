#pragma once
// Fitting the tree acceptance model to measured accept lengths at known settings
// (docs/acceptance.md#fitting). Parameters: the first-choice rate a, the coverage exponent beta
// and the per-depth decay gamma of shaped_acceptance(). Only as many are fitted as the data can
// tell apart; the others keep their defaults (beta 0.5, gamma 1) and the result says which.
#include <string>
#include <vector>

#include "accept/tree_model.h"

namespace specsim::accept {

/// One measured accept len at one SGLang setting.
struct AcceptObservation {
  int steps = 0, topk = 0, draft_tokens = 0;
  double accept_len = 0;  ///< accepted draft tokens per verify + 1
  std::string source;     ///< file (and line) it comes from
  std::string model;      ///< the target model its source names (an SGLang log's model_path); "" unknown
};

struct AcceptFit {
  double rate = 0, beta = kDefaultCoverageBeta, decay = 1.0;
  bool beta_fitted = false, decay_fitted = false;
  TreeAcceptance model;
  /// One per distinct setting: the setting, the mean measured accept len and the model's.
  struct Point {
    int steps = 0, topk = 0, draft_tokens = 0;
    double measured = 0, fitted = 0;
    int count = 0;  ///< observations averaged
  };
  std::vector<Point> points;
  double rms_error = 0;  ///< over points, in accept-len units
  std::string note;      ///< what was fitted and what was assumed, in words
};

/// The rate a with shaped_acceptance(a, beta, decay) giving `accept_len` at this setting (the
/// model rises with a); clamped to [0, 1).
double rate_for_accept_len(double accept_len, int steps, int topk, int draft_tokens, double beta = kDefaultCoverageBeta,
                           double decay = 1.0);

/// Fits the model to the observations (averaged per setting). InputError naming the first bad
/// observation's source when a setting is one SGLang does not run or an accept len is outside
/// [1, steps + 1]. `held_decay`: the per-depth decay kept when the observations cannot fit one (a
/// zoo draft's own `depth_decay`; 1: the same rate at every depth).
AcceptFit fit_acceptance(const std::vector<AcceptObservation>& obs, double held_decay = 1.0);

}  // namespace specsim::accept
