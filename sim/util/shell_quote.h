#pragma once
// Commands printed for the user to paste: every word quoted for a POSIX shell, so a value taken
// from a file (a model name, a path) is one argument and never runs anything.
#include <string>
#include <string_view>
#include <vector>

namespace specsim {

/// `word` as a shell reads it back as one argument: unchanged when it holds only characters no
/// shell treats specially (letters, digits, `_@%+=:,./-`), else in single quotes ('\'' for a
/// quote); a word with control characters (a newline) is written $'...' with them escaped, so
/// the command stays one line.
std::string shell_quote(std::string_view word);

/// The words, each quoted, joined by spaces.
std::string shell_join(const std::vector<std::string>& words);

}  // namespace specsim
