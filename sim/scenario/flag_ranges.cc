#include "scenario/flag_ranges.h"

#include "util/error.h"

namespace specsim {

std::string FlagRange::help_suffix() const { return " (" + std::to_string(lo) + ".." + std::to_string(hi) + ")"; }

void FlagRange::require(long long v) const {
  if (v < lo || v > hi)
    throw InputError("must be in " + std::to_string(lo) + ".." + std::to_string(hi), std::string(flag));
}

void FlagRange::require_at(long long v, const std::string& where) const {
  if (v < lo || v > hi)
    throw InputError("must be in " + std::to_string(lo) + ".." + std::to_string(hi) + " (as " + std::string(flag) + ")",
                     where);
}

}  // namespace specsim
