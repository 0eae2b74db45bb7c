#include "scenario/yaml_file.h"

#include "util/bounded_read.h"
#include "util/error.h"
#ifdef SPECSIM_WITH_YAML
#include <yaml-cpp/yaml.h>
#endif

namespace specsim {
using nlohmann::json;

bool is_yaml_path(const std::string& p) {
  auto ends = [&](const std::string& s) {
    return p.size() >= s.size() && p.compare(p.size() - s.size(), s.size(), s) == 0;
  };
  return ends(".yaml") || ends(".yml");
}

bool yaml_supported() {
#ifdef SPECSIM_WITH_YAML
  return true;
#else
  return false;
#endif
}

#ifdef SPECSIM_WITH_YAML
namespace {
json to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      json j = json::object();
      for (const auto& kv : n) j[kv.first.as<std::string>()] = to_json(kv.second);
      return j;
    }
    case YAML::NodeType::Sequence: {
      json j = json::array();
      for (const auto& e : n) j.push_back(to_json(e));
      return j;
    }
    case YAML::NodeType::Scalar: {
      const std::string s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted: a string whatever it looks like
      bool b;
      if (YAML::convert<bool>::decode(n, b)) return b;
      try {
        std::size_t used = 0;
        const double d = std::stod(s, &used);
        if (used == s.size()) {
          if (s.find_first_of(".eE") == std::string::npos) return static_cast<long long>(d);
          return d;
        }
      } catch (...) {
      }
      return s;
    }
    default: return nullptr;
  }
}
}  // namespace

json read_yaml_file(const std::string& path) {
  try {
    return to_json(YAML::Load(read_bounded(path, path)));  // size- and time-bounded, as every input
  } catch (const YAML::Exception& e) {
    throw InputError("bad YAML: " + std::string(e.what()), path);
  }
}
#else
json read_yaml_file(const std::string& path) {
  throw InputError("this specsim was built without yaml-cpp (install libyaml-cpp-dev and rebuild): use JSON", path);
}
#endif

}  // namespace specsim
