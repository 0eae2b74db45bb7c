#pragma once
// A scenario file written as block YAML (for `-o scenario.yaml`): every string double-quoted
// (JSON's escapes are YAML's), numbers and booleans bare, so scenario/yaml_file.h reads back the
// same JSON value.
#include <nlohmann/json.hpp>
#include <string>

namespace specsim::diagnose {

/// `j` as block YAML, `header` lines first as `# ` comments.
std::string to_yaml(const nlohmann::json& j, const std::string& header = "");

}  // namespace specsim::diagnose
