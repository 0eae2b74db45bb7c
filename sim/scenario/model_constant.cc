#include "scenario/model_constant.h"

#include <fmt/format.h>

#include "scenario/paths.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

double model_constant(const std::string& file, const std::string& key, double lo, double hi,
                      const std::string& meaning) {
  const std::string path = models_dir() + "/" + file, field = "models/" + file;
  const nlohmann::json j = read_json_file(path);
  if (!j.is_object()) throw InputError(path + ": needs a JSON object", field);
  const double v = sourced_number(j, key, path);
  if (v < lo || v > hi)
    throw InputError(
        fmt::format("{}: {} must lie in [{:g}, {:g}] ({}), got {}", path, key, lo, hi, meaning, std::to_string(v)),
        field);
  return v;
}

}  // namespace specsim
