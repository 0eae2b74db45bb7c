#pragma once
// What `specsim tune` prints and writes: a table per batch size (text), JSON, CSV and a gnuplot
// plot of the best setting's tok/s against plain decoding over the batch sizes.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "accept/fit.h"
#include "tune/tune.h"

namespace specsim::tune {

/// Where the acceptance came from, for the report.
struct AcceptanceOrigin {
  std::string from;                      ///< e.g. "SGLang log a.log (2 settings)"
  std::string note;                      ///< what was fitted or assumed
  std::optional<accept::AcceptFit> fit;  ///< when fitted to measured accept lengths
  /// Why the acceptance may not fit this deployment (measured on another model).
  std::vector<std::string> warnings;
};

struct TuneReport {
  const TuneInput& in;
  const TuneResult& result;
  AcceptanceOrigin acceptance;
  std::size_t top = 10;  ///< rows per batch size shown (0: all)
  double elapsed_s = 0;
};

/// Text for stdout: the acceptance, then per batch size plain decoding and the best settings,
/// then where speculation stops paying.
std::string tune_text(const TuneReport& r);

/// JSON (docs/tune.md#json).
nlohmann::json tune_json(const TuneReport& r);

/// CSV: one row per shown setting: batch_size, rank, steps, topk, draft_tokens, allreduce,
/// accept_len, cycle_us, tok_s, speedup, plain_tok_s.
std::string tune_csv(const TuneReport& r);

/// Draws the best setting's tok/s over plain decoding against batch size, per backend, into
/// `path` (.png/.svg), the batch size where speculation stops paying marked; InputError naming
/// --plot on failure.
void draw_tune_plot(const TuneReport& r, const std::string& path, const std::string& script_path);

}  // namespace specsim::tune
