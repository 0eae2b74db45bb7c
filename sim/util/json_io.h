#pragma once
// Reading JSON files and sourced numbers ({"value": V, "source": "..."}) with errors that name
// the file and the field.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace specsim {

/// Parses a JSON file; InputError naming the file when it is missing, unreadable or malformed.
nlohmann::json read_json_file(const std::string& path);

/// The deepest nesting of arrays and objects any JSON input may have (specsim's own files use
/// fewer than 10 levels); deeper input is refused before it is parsed, so nothing recurses on it.
constexpr int kMaxJsonDepth = 64;

/// InputError naming `where` when `text` nests arrays/objects deeper than kMaxJsonDepth, or holds
/// so many values that parsed they would take more than run_memory_limit_bytes().
void check_json_depth(std::string_view text, const std::string& where);

/// A JSON value for an error line: one line, invalid UTF-8 replaced, cut at `max_chars`.
std::string json_excerpt(const nlohmann::json& v, std::size_t max_chars = 60);

/// Parses JSON text (depth checked first); InputError naming `where` with the line of the first error.
nlohmann::json parse_json_text(const std::string& text, const std::string& where);

/// The largest magnitude a sourced number may have (figures are in GB/s, TFLOP/s, us, GiB).
constexpr double kMaxSourcedValue = 1e9;

/// Reads `obj[key]` as {"value": V, "source": S}: V finite, |V| <= kMaxSourcedValue, S non-empty.
/// `where` prefixes errors.
double sourced_number(const nlohmann::json& obj, const std::string& key, const std::string& where);

/// Reads a plain required field of the given JSON type with an error naming `where.key`.
int json_int(const nlohmann::json& obj, const std::string& key, const std::string& where);
double json_double(const nlohmann::json& obj, const std::string& key, const std::string& where);
std::string json_string(const nlohmann::json& obj, const std::string& key, const std::string& where);
bool json_bool(const nlohmann::json& obj, const std::string& key, const std::string& where);

/// The value, or JSON null when there is none.
inline nlohmann::json json_or_null(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
/// `j` as JSON text for an output (a report on stdout, a profile): bytes of a string that are not
/// UTF-8 (a path such as $'\xff.json') become U+FFFD, so the text is always valid JSON and this
/// never throws (nlohmann's plain dump() does, after other outputs may have been written).
std::string dump_json(const nlohmann::json& j, int indent = 2);

/// InputError naming `where` and the first string of `j` that is not UTF-8 (its bad bytes shown as
/// \xff): for files that must read back exactly, such as a saved scenario's paths.
void require_utf8_json(const nlohmann::json& j, const std::string& where);

/// Writes `text` to `path` through a temporary file renamed into place, so a failed run leaves
/// no partial file. InputError naming `flag` when the path cannot be written.
void write_file_atomic(const std::string& path, const std::string& text, const std::string& flag);

}  // namespace specsim
