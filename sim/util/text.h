#pragma once
// Small string helpers shared by the readers (one definition, so no file carries its own copy).
#include <string>
#include <string_view>

namespace specsim {

/// `s` with ASCII letters lower-cased (flag values, algorithm and kernel names).
inline std::string ascii_lower(std::string_view s) {
  std::string o(s);
  for (auto& c : o) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return o;
}

/// `s` with ASCII letters upper-cased (algorithm names as SGLang spells them).
inline std::string ascii_upper(std::string_view s) {
  std::string o(s);
  for (auto& c : o) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return o;
}

}  // namespace specsim
