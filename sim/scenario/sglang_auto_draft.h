#pragma once
// The (steps, topk, draft tokens) SGLang runs when a speculative command gives none of them
// (auto_choose_speculative_params), by release and the target's architecture
// (docs/sources.md#S-sglang-auto-draft).
#include <string>

namespace specsim {

struct AutoDraftShape {
  int steps = 0;
  int topk = 0;
  int draft_tokens = 0;
  bool operator==(const AutoDraftShape&) const = default;
};

/// SGLang `release`'s own choice ("" for v0.5.2, the pinned release) for a target whose HF
/// `architectures[0]` is `architecture`.
AutoDraftShape sglang_auto_draft_shape(const std::string& architecture, const std::string& release);

/// The note for a run whose draft shape is SGLang's own choice in whole (`none_given`) or in part,
/// "" where nothing needs saying. `stated` (--sglang-release): said where `release`'s choice
/// differs from v0.5.2's. Otherwise `release` is the pinned one ("") or a lower bound the
/// command's later flags set: said where a later release chooses otherwise.
std::string sglang_auto_draft_note(const std::string& architecture, const std::string& release, bool stated,
                                   bool none_given);

}  // namespace specsim
