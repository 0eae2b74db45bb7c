#pragma once
// A points file: a published all-reduce figure kept as its source printed it, one `bytes time_us`
// pair a line, `#` comments (the header names the columns: `# bytes  time_us`). It does not say how
// many ranks ran: traces/nccl-tests/index.json does for the repo's own, `--world` for a user's.
#include <string>
#include <vector>

namespace specsim::ingest {

struct TimedSize {
  double bytes = 0, us = 0;
};

/// Whether TEXT is a points file: a `# bytes ... time_us` header comment before any data row.
bool is_points_file(const std::string& text);

/// The pairs of FILE's TEXT in file order; InputError `expected ...` naming FILE:LINE on a line
/// that is not two numbers > 0, or FILE when there is no pair.
std::vector<TimedSize> parse_points_file(const std::string& text, const std::string& file);

}  // namespace specsim::ingest
