#include "scenario/draft_acceptance.h"

#include <fmt/format.h>

#include "scenario/paths.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

double draft_accept_decay(const std::string& draft_config_path) {
  const std::size_t slash = draft_config_path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : draft_config_path.substr(0, slash);
  const std::string path = dir + "/acceptance.json";
  if (!is_file(path)) return 1.0;
  const nlohmann::json j = read_json_file(path);
  if (!j.is_object()) throw InputError(path + ": needs a JSON object", path);
  const double decay = sourced_number(j, "depth_decay", path);
  if (decay < kDepthDecayLo || decay > kDepthDecayHi)
    throw InputError(
        fmt::format("{}: depth_decay {:g} outside [{:g}, {:g}]", path, decay, kDepthDecayLo, kDepthDecayHi), path);
  return decay;
}

}  // namespace specsim
