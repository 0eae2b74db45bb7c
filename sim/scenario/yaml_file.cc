#include "scenario/yaml_file.h"

#include <cmath>
#include <sstream>
#include <vector>

#include "util/bounded_read.h"
#include "util/error.h"
#include "util/json_io.h"
#ifdef SPECSIM_WITH_YAML
#include <yaml-cpp/eventhandler.h>
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

// What one YAML input may expand to: aliases let a few hundred bytes name billions of nodes
// ("billion laughs"), so the expansion is counted as it is built, and nesting is bounded as JSON's is.
constexpr std::size_t kMaxYamlNodes = 100'000;  // a scenario file holds a few hundred
constexpr std::size_t kMaxYamlScalarBytes = std::size_t(16) << 20;

struct Budget {
  const std::string& path;
  std::size_t nodes = 0, bytes = 0;
  void take(std::size_t scalar_bytes) {
    if (++nodes > kMaxYamlNodes || (bytes += scalar_bytes) > kMaxYamlScalarBytes)
      throw InputError("the YAML expands (through its aliases) to more than " + std::to_string(kMaxYamlNodes) +
                           " nodes or " + std::to_string(kMaxYamlScalarBytes >> 20) +
                           " MiB of text: write the values out, without nested aliases",
                       path);
  }
};

json to_json(const YAML::Node& n, Budget& b, int depth) {
  if (depth > kMaxJsonDepth)
    throw InputError("YAML nested deeper than " + std::to_string(kMaxJsonDepth) + " levels", b.path);
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      b.take(0);
      json j = json::object();
      for (const auto& kv : n) {
        if (!kv.first.IsScalar()) throw InputError("a mapping key that is not a plain word", b.path);
        const std::string key = kv.first.Scalar();
        b.take(key.size());
        // yaml-cpp keeps both of a repeated key; a JSON object (and the user) would see one.
        if (j.contains(key))
          throw InputError("key '" + key + "' given twice in one mapping: keep one", b.path + ": " + key);
        j[key] = to_json(kv.second, b, depth + 1);
      }
      return j;
    }
    case YAML::NodeType::Sequence: {
      b.take(0);
      json j = json::array();
      for (const auto& e : n) j.push_back(to_json(e, b, depth + 1));
      return j;
    }
    case YAML::NodeType::Scalar: {
      const std::string s = n.Scalar();
      b.take(s.size());
      if (n.Tag() == "!") return s;  // quoted: a string whatever it looks like
      bool v;
      if (YAML::convert<bool>::decode(n, v)) return v;
      try {
        std::size_t used = 0;
        const double d = std::stod(s, &used);
        if (used == s.size()) {
          // A whole number that fits is an integer; anything else (2048.9, 1e300) a double.
          if (s.find_first_of(".eEnNiI") == std::string::npos && std::abs(d) < 9e18) return static_cast<long long>(d);
          return d;
        }
      } catch (...) {
      }
      return s;
    }
    default: b.take(0); return nullptr;
  }
}
// Sees the parser's events only to count documents.
struct DocumentCounter : YAML::EventHandler {
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

json read_yaml_file(const std::string& path) { return parse_yaml_text(read_bounded(path, path), path); }

json parse_yaml_text(const std::string& text, const std::string& where) {
  check_json_depth(text, where);  // flow collections ([[[...]]]) bounded before yaml-cpp recurses on them
  try {
    // Documents counted by events, at most two: YAML::LoadAll can loop forever on a few bytes
    // (`,""  2 { 4.96}` yields document after document; found by fuzzing).
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentCounter counter;
    int docs = 0;
    while (docs < 2 && parser.HandleNextDocument(counter)) ++docs;
    if (docs > 1)
      throw InputError(
          "the file holds more than one YAML document (separated by ---): a scenario is one document; "
          "keep the first",
          where);
    Budget b{where};
    return docs == 0 ? json(nullptr) : to_json(YAML::Load(text), b, 0);
  } catch (const YAML::Exception& e) {
    throw InputError("bad YAML: " + std::string(e.what()), where);
  }
}
#else
json read_yaml_file(const std::string& path) { return parse_yaml_text("", path); }

json parse_yaml_text(const std::string&, const std::string& where) {
  throw InputError("this specsim was built without yaml-cpp (install libyaml-cpp-dev and rebuild): use JSON", where);
}
#endif

}  // namespace specsim
