#include "ingest/sglang_rank_tag.h"

#include <cctype>

namespace specsim::ingest {

std::optional<int> find_dp_rank(std::string_view prefix) {
  for (std::size_t at = prefix.find("DP"); at != std::string_view::npos; at = prefix.find("DP", at + 2)) {
    // a word of its own: after a space or '[', digits up to a space or ']'
    if (at > 0 && prefix[at - 1] != ' ' && prefix[at - 1] != '[') continue;
    std::size_t end = at + 2;
    while (end < prefix.size() && std::isdigit(static_cast<unsigned char>(prefix[end]))) ++end;
    if (end == at + 2 || end - at - 2 > 6) continue;
    if (end < prefix.size() && prefix[end] != ' ' && prefix[end] != ']') continue;
    int rank = 0;
    for (std::size_t i = at + 2; i < end; ++i) rank = rank * 10 + (prefix[i] - '0');
    return rank;
  }
  return std::nullopt;
}

}  // namespace specsim::ingest
