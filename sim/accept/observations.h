#pragma once
// Measured accept lengths with the settings they were measured at, from what SGLang users have
// (docs/acceptance.md#what-the-model-is-fitted-from):
//  - an SGLang server log: its `server_args=ServerArgs(...)` line(s) (read by ingest/sglang_log)
//    give the speculative settings and the `accept len` of the decode lines after each is averaged
//    per setting;
//  - a bench_speculative.py output (JSON lines: steps, topk, num_draft_tokens, acc_length; rows
//    with steps 0 are plain decoding and are skipped), or a CSV with a header naming the columns
//    steps, topk, num_draft_tokens and accept_len (or acc_length).
#include <string>
#include <vector>

#include "accept/fit.h"

namespace specsim::accept {

/// The draft settings a log ran, stated on the command line for a log (an excerpt from an issue,
/// say) that has no server_args line; `flags` names them in the observations' source.
struct StatedSettings {
  int steps = 0, topk = 0, draft_tokens = 0;
  std::string flags;
};

/// The observations of an SGLang log's text (one per setting met). Accept len lines with no
/// server_args line above them take `stated` (and set `*stated_used`); InputError `what
/// (FILE:LINE)` when there is none, or under a server_args line without speculation.
std::vector<AcceptObservation> observations_from_log(const std::string& text, const std::string& file,
                                                     const StatedSettings* stated = nullptr,
                                                     bool* stated_used = nullptr);

/// The observations of a bench_speculative.py JSON-lines file or a CSV (see above).
std::vector<AcceptObservation> observations_from_bench(const std::string& text, const std::string& file);

/// Reads `path` and picks the reader by its content: JSON lines or a CSV header starting with a
/// column name are bench results, anything else an SGLang log. `flag` names the flag in errors.
/// `stated` as for observations_from_log (bench results name their settings on every row).
std::vector<AcceptObservation> read_observations(const std::string& path, const std::string& flag,
                                                 const StatedSettings* stated = nullptr, bool* stated_used = nullptr);

}  // namespace specsim::accept
