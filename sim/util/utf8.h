#pragma once
// File names are bytes, not text: a path may hold bytes that are not UTF-8 ($'\xff.json'). Error
// lines and JSON outputs are UTF-8, so such bytes are shown escaped (\xff) where a path is echoed.
#include <string>
#include <string_view>

namespace specsim {

/// Whether `s` is valid UTF-8 (no overlong forms, surrogates or code points above U+10FFFF).
bool is_utf8(std::string_view s);

/// `s` with every byte that is not part of a valid UTF-8 sequence written as `\xNN` (lower-case
/// hex); valid text, multi-byte characters included, is kept as is.
std::string escape_non_utf8(std::string_view s);

}  // namespace specsim
