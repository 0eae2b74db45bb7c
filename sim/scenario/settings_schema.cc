#include "scenario/settings_schema.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "util/error.h"
#include "util/json_io.h"

namespace specsim {
using nlohmann::json;

std::string canonical_setting_key(std::string_view key) {
  std::string k(key);
  std::replace(k.begin(), k.end(), '-', '_');
  if (k == "tp") return "tp_size";
  if (k == "model") return "model_path";
  return k;
}

void refuse_duplicate_settings(const json& obj, const std::string& where) {
  if (!obj.is_object()) return;
  std::map<std::string, std::string> seen;  // canonical -> as written
  for (const auto& item : obj.items()) {
    const auto [it, fresh] = seen.emplace(canonical_setting_key(item.key()), item.key());
    if (!fresh)
      throw InputError("given twice, as '" + it->second + "' and '" + item.key() + "': keep one",
                       where + ": " + item.key());
  }
}

long long setting_int(const json& v, const FlagRange& range, const std::string& where) {
  if (!v.is_number())
    throw InputError("must be a whole number, not " + json_excerpt(v) + " (as " + std::string(range.flag) + ")", where);
  const double d = v.get<double>();
  if (!std::isfinite(d) || d != std::floor(d))
    throw InputError("must be a whole number, not " + json_excerpt(v) + " (as " + std::string(range.flag) + ")", where);
  if (d < double(range.lo) || d > double(range.hi))
    throw InputError("must be in " + std::to_string(range.lo) + ".." + std::to_string(range.hi) + " (as " +
                         std::string(range.flag) + "), not " + json_excerpt(v),
                     where);
  return static_cast<long long>(d);
}

double setting_number(const json& v, const std::string& where) {
  if (!v.is_number()) throw InputError("must be a number, not " + json_excerpt(v), where);
  const double d = v.get<double>();
  if (!std::isfinite(d)) throw InputError("must be a finite number", where);
  return d;
}

std::string setting_string(const json& v, const std::string& where) {
  if (!v.is_string()) throw InputError("must be a string, not " + json_excerpt(v), where);
  std::string s = v.get<std::string>();
  if (s.empty()) throw InputError("an empty string: give a value, or leave the key out", where);
  return s;
}

bool setting_bool(const json& v, const std::string& where) {
  if (!v.is_boolean()) throw InputError("must be true or false, not " + json_excerpt(v), where);
  return v.get<bool>();
}

}  // namespace specsim
