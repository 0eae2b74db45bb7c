#pragma once
// Reading JSON files and sourced numbers ({"value": V, "source": "..."}) with errors that name
// the file and the field.
#include <nlohmann/json.hpp>
#include <string>

namespace specsim {

/// Parses a JSON file; InputError naming the file when it is missing, unreadable or malformed.
nlohmann::json read_json_file(const std::string& path);

/// Parses JSON text; InputError naming `where` with the line of the first error.
nlohmann::json parse_json_text(const std::string& text, const std::string& where);

/// Reads `obj[key]` as {"value": V, "source": S}: V finite, S non-empty. `where` prefixes errors.
double sourced_number(const nlohmann::json& obj, const std::string& key, const std::string& where);

/// Reads a plain required field of the given JSON type with an error naming `where.key`.
int json_int(const nlohmann::json& obj, const std::string& key, const std::string& where);
double json_double(const nlohmann::json& obj, const std::string& key, const std::string& where);
std::string json_string(const nlohmann::json& obj, const std::string& key, const std::string& where);
bool json_bool(const nlohmann::json& obj, const std::string& key, const std::string& where);

/// Writes `text` to `path` through a temporary file renamed into place, so a failed run leaves
/// no partial file. InputError naming `flag` when the path cannot be written.
void write_file_atomic(const std::string& path, const std::string& text, const std::string& flag);

}  // namespace specsim
