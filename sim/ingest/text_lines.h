#pragma once
// What every log parser shares: reading a file, splitting it into numbered lines, and errors
// that name FILE:LINE so the user can open the line.
#include <string>
#include <string_view>
#include <vector>

namespace specsim::ingest {

/// The whole file; InputError naming `flag FILE` when it is missing or unreadable.
std::string read_text(const std::string& path, const std::string& flag);

/// Lines without their terminators ("\n" or "\r\n"); line i is number i + 1.
std::vector<std::string_view> split_lines(std::string_view text);

/// InputError `what (FILE:LINE)`.
[[noreturn]] void fail_at(const std::string& file, std::size_t line, const std::string& what);

/// Whitespace-separated fields.
std::vector<std::string_view> fields(std::string_view line);

/// A finite number filling the whole field, or false.
bool parse_number(std::string_view s, double& out);

/// Trims spaces and tabs at both ends.
std::string_view trim(std::string_view s);

/// 1-based line of byte `offset` in `text`.
std::size_t line_of_offset(std::string_view text, std::size_t offset);

}  // namespace specsim::ingest
