#include "util/shell_quote.h"

#include <fmt/format.h>

namespace specsim {

std::string shell_quote(std::string_view w) {
  if (!w.empty() && w.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-") ==
                        std::string_view::npos)
    return std::string(w);
  bool control = false;
  for (const char c : w) control = control || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  std::string out;
  if (!control) {
    out = "'";
    for (const char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  }
  out = "$'";  // ANSI-C quoting (bash, zsh, ksh; POSIX since 2024)
  for (const char c : w) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\'' || c == '\\')
      out += std::string("\\") + c;
    else if (u < 0x20 || u == 0x7f)
      out += fmt::format("\\x{:02x}", u);
    else
      out += c;
  }
  return out + "'";
}

std::string shell_join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + shell_quote(w);
  return out;
}

}  // namespace specsim
