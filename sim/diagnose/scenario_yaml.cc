#include "diagnose/scenario_yaml.h"

#include <sstream>

namespace specsim::diagnose {

using nlohmann::json;

namespace {

bool plain_key(const std::string& k) {
  if (k.empty()) return false;
  for (char c : k)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return !std::isdigit(static_cast<unsigned char>(k[0]));
}

std::string key(const std::string& k) { return plain_key(k) ? k : json(k).dump(); }

bool inline_value(const json& v) { return !v.is_structured() || v.empty(); }

std::string scalar(const json& v) {
  if (v.is_object()) return "{}";
  if (v.is_array()) return "[]";
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

void emit(std::ostringstream& o, const json& j, int indent);

void emit_entry(std::ostringstream& o, const std::string& prefix, const json& v, int indent) {
  if (inline_value(v)) {
    o << prefix << " " << scalar(v) << "\n";
  } else {
    o << prefix << "\n";
    emit(o, v, indent + 2);
  }
}

void emit(std::ostringstream& o, const json& j, int indent) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) emit_entry(o, pad + key(k) + ":", v, indent);
  } else {
    for (const auto& v : j) {
      if (v.is_object() && !v.empty()) {
        // "- " then the object's keys, the first on the dash's line.
        bool first = true;
        for (const auto& [k, x] : v.items()) {
          emit_entry(o, (first ? pad + "- " : pad + "  ") + key(k) + ":", x, indent + 2);
          first = false;
        }
      } else {
        emit_entry(o, pad + "-", v, indent);
      }
    }
  }
}

}  // namespace

std::string to_yaml(const json& j, const std::string& header) {
  std::ostringstream o;
  std::istringstream h(header);
  for (std::string l; std::getline(h, l);) o << "# " << l << "\n";
  emit(o, j, 0);
  return o.str();
}

}  // namespace specsim::diagnose
