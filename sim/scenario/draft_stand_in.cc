#include "scenario/draft_stand_in.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "scenario/model_spec.h"
#include "scenario/paths.h"
#include "util/json_io.h"
#include "util/text.h"

namespace specsim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A config's shape where the target's forward and the draft's inputs depend on it.
json stand_in_shape(const std::string& config) {
  const json c = read_json_file(config);
  json s;
  for (const char* k : {"model_type", "num_hidden_layers", "hidden_size", "intermediate_size", "num_attention_heads",
                        "num_key_value_heads", "vocab_size"})
    s[k] = c.contains(k) ? c.at(k) : json(nullptr);
  return s;
}

}  // namespace

std::string zoo_entry_name(const std::string& draft_config) {
  const fs::path p(draft_config);
  return p.parent_path().parent_path().filename().string() + "/" + p.parent_path().filename().string();
}

DraftStandIn same_architecture_draft(const std::string& target_config) {
  const json want = stand_in_shape(target_config);
  const fs::path own = fs::path(target_config).parent_path();
  std::vector<fs::path> models;
  std::error_code ec;
  for (const auto& m : fs::directory_iterator(models_dir(), ec))
    if (m.path() != own && is_file((m.path() / "config.json").string()) &&
        is_file((m.path() / "eagle3" / "config.json").string()))
      models.push_back(m.path());
  std::sort(models.begin(), models.end());
  for (const auto& m : models)
    if (stand_in_shape((m / "config.json").string()) == want) {
      const std::string draft = (m / "eagle3" / "config.json").string();
      return {draft, "the zoo's " + zoo_entry_name(draft) + " stands in: " + m.filename().string() +
                         " has the same architecture as " + own.filename().string() +
                         " (layers, hidden, heads, vocabulary), and the zoo holds no EAGLE-3 draft of " +
                         own.filename().string() + " itself"};
    }
  return {};
}

DraftStandIn named_zoo_draft(const std::string& target_config, const std::string& remote) {
  const fs::path dir = fs::path(target_config).parent_path();
  const std::string name = ascii_lower(remote);
  if ((name.find("nextn") != std::string::npos || name.find("mtp") != std::string::npos) &&
      zoo_has_nextn(target_config)) {
    const std::string c = (dir / "nextn" / "config.json").string();
    return {c, "the draft " + remote + " names the model's own NextN (MTP) layer: the zoo's " + zoo_entry_name(c) +
                   " stands in, run under the command's algorithm"};
  }
  std::error_code ec;
  std::vector<fs::path> folders;  // sorted: the same pick every run
  for (const auto& d : fs::directory_iterator(dir, ec)) folders.push_back(d.path());
  std::sort(folders.begin(), folders.end());
  for (const auto& d : folders) {
    const std::string folder = d.filename().string();
    const auto dash = folder.find('-');
    if (dash == std::string::npos || !is_file((d / "config.json").string())) continue;
    if (name.find(folder.substr(dash + 1)) != std::string::npos) {
      const std::string c = (d / "config.json").string();
      return {c, "the draft " + remote + " is taken as the zoo's " + zoo_entry_name(c) + ", the draft its name names"};
    }
  }
  return {};
}

}  // namespace specsim
