#pragma once
// The allowed range of every integer run flag, stated once: the command line shows it in --help,
// validate_run() enforces it, and the sweep checks each listed value against it.
#include <string>
#include <string_view>

namespace specsim {

/// An inclusive range of one integer flag.
struct FlagRange {
  std::string_view flag;  ///< e.g. "--tp-size"
  long long lo, hi;
  /// " (LO..HI)", appended to the flag's help text.
  std::string help_suffix() const;
  /// Throws InputError "must be in LO..HI" naming the flag when `v` is outside.
  void require(long long v) const;
  /// The same check for a value read from a file: the error names `where` (file: field) and the flag.
  void require_at(long long v, const std::string& where) const;
};

namespace flag_ranges {
inline constexpr FlagRange kTpSize{"--tp-size", 1, 1024};
inline constexpr FlagRange kNumGpus{"--num-gpus", 1, 1024};
inline constexpr FlagRange kNnodes{"--nnodes", 1, 1024};
inline constexpr FlagRange kBatchSize{"--batch-size", 1, 1 << 20};
inline constexpr FlagRange kContextLen{"--context-len", 1, 1LL << 26};
inline constexpr FlagRange kCudaGraphMaxBs{"--cuda-graph-max-bs", 0, 1 << 20};
inline constexpr FlagRange kNumSteps{"--speculative-num-steps", 1, 64};
inline constexpr FlagRange kTopk{"--speculative-eagle-topk", 1, 64};
inline constexpr FlagRange kDraftTokens{"--speculative-num-draft-tokens", 2, 1024};
inline constexpr FlagRange kEpSize{"--ep-size", 1, 1024};
inline constexpr FlagRange kPpSize{"--pp-size", 1, 64};
inline constexpr FlagRange kDpSize{"--dp-size", 1, 1024};
}  // namespace flag_ranges

}  // namespace specsim
