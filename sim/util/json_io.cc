#include "util/json_io.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>

#include "util/bounded_read.h"
#include "util/error.h"
#include "util/memory_limit.h"
#include "util/output_files.h"
#include "util/utf8.h"

namespace specsim {

nlohmann::json read_json_file(const std::string& path) { return parse_json_text(read_bounded(path, path), path); }

namespace {
// What one JSON value takes once parsed, at most, beside its text: its slot in its array or its
// object's node, and the allocation of a container or string. 678 MB peak RSS for a 59 MB torch
// trace of 4.5M values (`ingest --torch-trace`, Debug build, 2026-12-02), 1.75 GB for 48 MB of
// 16.4M empty objects: 105-150 B a value with the program.
constexpr std::size_t kParsedJsonValueBytes = 160;
}  // namespace

void check_json_depth(std::string_view text, const std::string& where) {
  int depth = 0;
  // Values: the top one, one more after every ',' and the first of every non-empty container.
  std::size_t values = 1;
  bool in_string = false, escaped = false, opened = false;
  for (const char c : text) {
    if (opened && !in_string && c != ' ' && c != '\n' && c != '\r' && c != '\t') {
      opened = false;
      if (c != ']' && c != '}') ++values;
    }
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
      opened = true;
      if (++depth > kMaxJsonDepth)
        throw InputError("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels", where);
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',') {
      ++values;
    }
  }
  // Parsed, a small file can take many times its size; refused before the parser allocates (an
  // allocation failing inside it cannot always be recovered: its destructors allocate too).
  const std::size_t need = values * kParsedJsonValueBytes + 2 * text.size(), limit = run_memory_limit_bytes();
  if (need > limit)
    throw InputError(
        fmt::format("{} JSON values would take about {:.1f} GiB once read, more than the {:.1f} GiB of memory a "
                    "run may hold (half of the {:.1f} GiB this process may use): give a smaller file, "
                    "or run where more memory is free",
                    values, double(need) / double(1 << 30), double(limit) / double(1 << 30),
                    double(usable_memory_bytes()) / double(1 << 30)),
        where);
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
    // A text that no JSON value can start with (a log, a CSV, a command's output) is most likely the
    // wrong file: say what it begins with rather than "fix the file".
    const size_t first = text.find_first_not_of(" \t\r\n");
    const char c = first == std::string::npos ? '\0' : text[first];
    const bool json_start = std::string_view("{[\"-tfn0123456789").find(c) != std::string_view::npos;
    if (c >= 0x20 && c < 0x7f && !json_start) {
      std::string head = text.substr(first, std::min<size_t>(40, text.find('\n', first) - first));
      for (char& h : head)
        if (static_cast<unsigned char>(h) < 0x20 || static_cast<unsigned char>(h) >= 0x7f) h = '?';
      throw InputError("malformed JSON at line " + std::to_string(line) + ": this is text, not JSON (it begins '" +
                           head + "'): give the file this option reads",
                       where);
    }
    throw InputError("malformed JSON at line " + std::to_string(line) + ": fix the file", where);
  } catch (const nlohmann::json::exception& e) {
    // Valid syntax the library still refuses, e.g. a number overflowing a double (found by fuzzing).
    throw InputError(std::string("unreadable JSON: ") + e.what(), where);
  }
}

std::string dump_json(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

void require_utf8_json(const nlohmann::json& j, const std::string& where) {
  const auto refuse = [&](const std::string& s) {
    throw InputError("'" + escape_non_utf8(s) +
                         "' holds bytes that are not UTF-8, which a JSON file cannot keep as they are: rename it",
                     where);
  };
  if (j.is_string()) {
    if (!is_utf8(j.get_ref<const std::string&>())) refuse(j.get<std::string>());
  } else if (j.is_object()) {
    for (const auto& kv : j.items()) {
      if (!is_utf8(kv.key())) refuse(kv.key());
      require_utf8_json(kv.value(), where);
    }
  } else if (j.is_array()) {
    for (const auto& v : j) require_utf8_json(v, where);
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
