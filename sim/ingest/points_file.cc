#include "ingest/points_file.h"

#include <algorithm>
#include <cstdio>

#include "util/error.h"

namespace specsim::ingest {

bool is_points_file(const std::string& text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    if (line[first] != '#') return false;  // a data row came first
    const std::size_t bytes = line.find("bytes");
    if (bytes != std::string::npos && line.find("time_us", bytes) != std::string::npos) return true;
  }
  return false;
}

std::vector<TimedSize> parse_points_file(const std::string& text, const std::string& file) {
  std::vector<TimedSize> out;
  std::size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    TimedSize p;
    char extra = 0;
    if (std::sscanf(line.c_str(), "%lf %lf %c", &p.bytes, &p.us, &extra) != 2 || !(p.bytes > 0) || !(p.us > 0))
      throw InputError("expected `bytes time_us` with both > 0", file + ":" + std::to_string(line_no));
    out.push_back(p);
  }
  if (out.empty()) throw InputError("no rows", file);
  return out;
}

}  // namespace specsim::ingest
