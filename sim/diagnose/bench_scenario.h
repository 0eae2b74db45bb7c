#pragma once
// bench_speculative.py's results -> a scenario file whose `measured` entries are its rows, so
// `specsim run --scenario FILE` is anchored to all of them at once: the plain-decode rows as
// measured baselines, the speculative rows as cycles (spec tok/s with their accept len), which the
// anchors fit by least squares over the settings (anchors/anchors.h).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ingest/bench_speculative.h"

namespace specsim {

/// What the results file does not say: the deployment the script launched.
struct BenchDeployment {
  std::string file;       ///< the results file, as named in sources
  std::string model;      ///< zoo name or config.json (--model-path)
  std::string draft;      ///< --speculative-draft-model-path ("" : the zoo's)
  std::string hardware;   ///< GPU:TOPOLOGY
  std::string algorithm;  ///< the script passes EAGLE; EAGLE3 for an EAGLE-3 draft
  int tp_size = 1;
  std::optional<long long> context_len;
};

/// The scenario file: its own settings are the fastest speculative row's (the smallest batch size
/// first), every row a `measured` entry with the script's own settings (cuda-graph-max-bs = the
/// batch size, as the script launches the server). InputError when the rows hold no speculative
/// setting, or two rows of one setting disagree.
nlohmann::json bench_scenario_json(const std::vector<ingest::BenchSpecRow>& rows, const BenchDeployment& d);

/// Builds the scenario, checks that it resolves (`specsim run --scenario` would accept it: the
/// model, draft and hardware exist, every row's settings are valid and its measurements
/// consistent), then writes it to `path` whole. InputError naming the flag otherwise.
void write_bench_scenario(const std::vector<ingest::BenchSpecRow>& rows, const BenchDeployment& d,
                          const std::string& path);

/// The rows as read (tok/s per request stream, as the script reports them): a table, or JSON.
std::string bench_rows_text(const std::vector<ingest::BenchSpecRow>& rows, bool as_json);

}  // namespace specsim
