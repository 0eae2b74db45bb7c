#pragma once
// The zoo model an SGLang launch served: its model_path (a Hugging Face id or a folder named
// after one) or served_model_name, mapped to a models/ name; --model overrides.
#include <optional>
#include <string>
#include <vector>

#include "ingest/sglang_log_summary.h"

namespace specsim::diagnose {

using ingest::LogSummary;  // the summary lives with the log parser (--baseline-from reads it too)

struct ModelMatch {
  std::string name;  ///< zoo name, or the --model value as given (a config path)
  std::string how;   ///< "--model", "model_path 'X' (LOG:LINE)", ...
};

/// The zoo's model names (the folders of models/ holding a config.json), sorted.
std::vector<std::string> zoo_models();

/// `flag` when given; else the launch's model. InputError listing the zoo and naming --model
/// when the log has no server_args line or its model is not in the zoo.
ModelMatch match_model(const std::optional<std::string>& flag, const LogSummary& log);

}  // namespace specsim::diagnose
