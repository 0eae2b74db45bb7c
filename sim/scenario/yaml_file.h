#pragma once
// YAML input (a scenario file written as SGLang's --config YAML): read into the same JSON value
// a JSON file would give. Built with yaml-cpp (Debian: libyaml-cpp-dev) when CMake finds it.
#include <nlohmann/json.hpp>
#include <string>

namespace specsim {

/// Whether `path` names a YAML file (.yaml or .yml).
bool is_yaml_path(const std::string& path);

/// Whether this build reads YAML (built with yaml-cpp).
bool yaml_supported();

/// Reads a YAML file as JSON (scalars that parse as numbers or booleans become those).
/// InputError naming the file on bad YAML, or when this build has no YAML support.
/// One document only (a second, after `---`, is refused, not ignored); a key given twice in one
/// mapping is refused; nesting, and what aliases expand to, are bounded.
nlohmann::json read_yaml_file(const std::string& path);

/// The same for YAML text already read; `where` names it in errors.
nlohmann::json parse_yaml_text(const std::string& text, const std::string& where);

}  // namespace specsim
