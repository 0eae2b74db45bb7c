#pragma once
// Value lists of a flag (sweep, tune --batch-size): `4,8`, `2..8`, `1..3:0.5`, `fixed:10..200:10,nccl`.
#include <string>
#include <string_view>
#include <vector>

#include "scenario/run_spec.h"

namespace specsim {

/// Most values one flag may expand to (a typo like 1..1e9 fails fast instead of eating memory:
/// an all-reduce choice is ~120 bytes, so 10 million of them took over 2 GB while expanding).
constexpr size_t kMaxAxisValues = 1'000'000;

/// Integers from a comma list of N or A..B[:STEP] (step defaults to 1), each in [lo, hi].
/// InputError naming `flag` on a malformed item, a non-integer, a backwards range or a value out of range.
std::vector<long long> parse_int_values(std::string_view text, const std::string& flag, long long lo, long long hi);

/// Numbers from a comma list of X or A..B[:STEP]; a range with a fractional end needs a STEP.
/// Values are rounded to the decimals written, so 1..2:0.1 yields 1.1, not 1.1000000000000001.
std::vector<double> parse_double_values(std::string_view text, const std::string& flag);

/// Backends from --allreduce values: each a comma list of nccl, custom[:VARIANT], fixed:SPEC where
/// SPEC is a number or range; bare numbers or ranges after a fixed: item continue it
/// (`fixed:10,20,50..100:10`). `@PHASES` after an item scopes it as parse_allreduce() does; on a
/// fixed: list it ends the list and scopes every value of it (`fixed:5..250:5@verify`: each value
/// a fixed:V@verify, NCCL in the other phases and the baseline), and phase names after it add
/// phases (`fixed:5..50:5@verify,draft_extend`).
std::vector<AllReduceChoice> parse_allreduce_values(const std::vector<std::string>& values, const std::string& flag);

/// The value of a --measured-* flag: one number. A measurement was taken once, at one setting, so
/// a list or range (what a sweep takes for settings) is refused, as is a non-number: InputError
/// naming `flag`. Its range (positive, finite) is validate_run()'s.
double parse_measurement(std::string_view text, const std::string& flag);

/// A comma list of non-empty words (dtype lists).
std::vector<std::string> parse_word_values(std::string_view text, const std::string& flag);

}  // namespace specsim
