#pragma once
// The one schema of a run's settings in a file (a scenario file's `settings`, SGLang's --config
// mapping): each key's type and range, the same ranges the flags have (flag_ranges.h). A key
// unknown, given twice under two spellings (`tp`, `tp_size`, `tp-size`), of the wrong type, out
// of range or fractional where the flag takes a whole number is an error naming the file and the
// key, never a value silently dropped or rounded.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "scenario/flag_ranges.h"

namespace specsim {

/// A key as SGLang spells it in its server args: dashes as underscores, `tp` as `tp_size`,
/// `model` as `model_path`.
std::string canonical_setting_key(std::string_view key);

/// Throws InputError naming `where: KEY` for the first key of `obj` whose canonical form another
/// key already took (`tp` and `tp-size` both given).
void refuse_duplicate_settings(const nlohmann::json& obj, const std::string& where);

/// A whole number in `range`: InputError naming `where` for a non-number, a fraction (2048.9),
/// or a value outside the range (the flag's own).
long long setting_int(const nlohmann::json& v, const FlagRange& range, const std::string& where);

/// A finite number.
double setting_number(const nlohmann::json& v, const std::string& where);

/// A non-empty string.
std::string setting_string(const nlohmann::json& v, const std::string& where);

/// true or false.
bool setting_bool(const nlohmann::json& v, const std::string& where);

}  // namespace specsim
