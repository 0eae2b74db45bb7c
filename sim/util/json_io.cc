#include "util/json_io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "util/bounded_read.h"
#include "util/error.h"
#include "util/output_files.h"

namespace specsim {

nlohmann::json read_json_file(const std::string& path) { return parse_json_text(read_bounded(path, path), path); }

void check_json_depth(std::string_view text, const std::string& where) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw InputError("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels", where);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

std::string json_excerpt(const nlohmann::json& v, std::size_t max_chars) {
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > max_chars) s = s.substr(0, max_chars) + "...";
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return s;
}

nlohmann::json parse_json_text(const std::string& text, const std::string& where) {
  check_json_depth(text, where);
  // A key given twice in one object would silently keep the last: refused, naming the key.
  std::vector<std::set<std::string>> keys;  // one set per open object
  std::string duplicate;
  const nlohmann::json::parser_callback_t no_duplicates = [&](int, nlohmann::json::parse_event_t ev,
                                                              nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (ev == E::object_start)
      keys.emplace_back();
    else if (ev == E::object_end && !keys.empty())
      keys.pop_back();
    else if (ev == E::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second &&
             duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  try {
    nlohmann::json j = nlohmann::json::parse(text, no_duplicates);
    if (!duplicate.empty())
      throw InputError("key " + json_excerpt(duplicate) + " given twice in one object: keep one", where);
    return j;
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the offset of the error; turn it into a line number for the user.
    size_t line = 1;
    for (size_t i = 0; i < text.size() && i + 1 < e.byte; ++i) line += text[i] == '\n';
    throw InputError("malformed JSON at line " + std::to_string(line) + ": fix the file", where);
  } catch (const nlohmann::json::exception& e) {
    // Valid syntax the library still refuses, e.g. a number overflowing a double (found by fuzzing).
    throw InputError(std::string("unreadable JSON: ") + e.what(), where);
  }
}

static const nlohmann::json& field(const nlohmann::json& obj, const std::string& key, const std::string& where) {
  if (!obj.is_object() || !obj.contains(key)) throw InputError("missing field '" + key + "'", where + "." + key);
  return obj.at(key);
}

double sourced_number(const nlohmann::json& obj, const std::string& key, const std::string& where) {
  const auto& f = field(obj, key, where);
  const std::string at = where + "." + key;
  if (!f.is_object() || !f.contains("value") || !f.contains("source"))
    throw InputError("expected {\"value\": number, \"source\": \"...\"}", at);
  if (!f["value"].is_number()) throw InputError("value is not a number", at + ".value");
  if (!f["source"].is_string() || f["source"].get<std::string>().empty())
    throw InputError("every number needs a non-empty source", at + ".source");
  const double v = f["value"].get<double>();
  if (!std::isfinite(v)) throw InputError("value is not finite", at + ".value");
  // Every sourced figure is a physical quantity in a human unit (GB/s, TFLOP/s, us, GiB): one
  // above 1e9 is a slip, named here rather than surfacing later as an overflow blamed on another input.
  if (std::abs(v) > kMaxSourcedValue)
    throw InputError("value " + json_excerpt(f["value"]) + " is beyond any physical figure in its unit (above 1e9)",
                     at + ".value");
  return v;
}

int json_int(const nlohmann::json& obj, const std::string& key, const std::string& where) {
  const auto& f = field(obj, key, where);
  if (!f.is_number_integer()) throw InputError("expected an integer", where + "." + key);
  const auto v = f.get<long long>();
  if (v < -(1LL << 31) || v >= (1LL << 31)) throw InputError("integer out of range", where + "." + key);
  return static_cast<int>(v);
}

double json_double(const nlohmann::json& obj, const std::string& key, const std::string& where) {
  const auto& f = field(obj, key, where);
  if (!f.is_number()) throw InputError("expected a number", where + "." + key);
  const double v = f.get<double>();
  if (!std::isfinite(v)) throw InputError("value is not finite", where + "." + key);
  return v;
}

std::string json_string(const nlohmann::json& obj, const std::string& key, const std::string& where) {
  const auto& f = field(obj, key, where);
  if (!f.is_string()) throw InputError("expected a string", where + "." + key);
  return f.get<std::string>();
}

bool json_bool(const nlohmann::json& obj, const std::string& key, const std::string& where) {
  const auto& f = field(obj, key, where);
  if (!f.is_boolean()) throw InputError("expected true or false", where + "." + key);
  return f.get<bool>();
}

void write_file_atomic(const std::string& path, const std::string& text, const std::string& flag) {
  write_outputs_atomic({{OutputFile{path, flag}, text}});
}

}  // namespace specsim
