#include "calibrate/profile_io.h"

#include <ctime>
#include <filesystem>

#include "scenario/hardware.h"
#include "scenario/paths.h"
#include "util/error.h"
#include "util/json_io.h"
#include "util/text.h"

namespace specsim {
using nlohmann::json;

std::string utc_date_today() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

// The base profile as raw JSON, so every number the fit does not touch keeps its source.
json base_profile_json(const std::string& spec) {
  namespace fs = std::filesystem;
  if (is_file(spec)) {
    json j = read_json_file(spec);
    if (!j.contains("gpu") || !j.contains("topology"))
      throw InputError("a hardware profile file holds {\"gpu\": {...}, \"topology\": {...}}", "--hardware " + spec);
    return {{"gpu", j["gpu"]}, {"topology", j["topology"]}};
  }
  const auto colon = spec.find(':');
  if (colon == std::string::npos)
    throw InputError("expected GPU:TOPOLOGY (e.g. h200:nvswitch) or a profile path", "--hardware");
  load_hardware(spec, 1);  // validates the names with the usual messages
  const fs::path root = fs::path(models_dir()) / "hardware";
  return {
      {"gpu", gpu_profile_json(spec.substr(0, colon))},  // an alias or a variant as run reads it
      {"topology", read_json_file((root / "topologies" / (ascii_lower(spec.substr(colon + 1)) + ".json")).string())}};
}

}  // namespace specsim
