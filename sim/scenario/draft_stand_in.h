#pragma once
// Which zoo draft stands in for a draft the zoo does not hold: one named by an id or a path on the
// serving machine, or none given for a target whose own zoo folder has no draft. Every stand-in
// is said in a note.
#include <string>

namespace specsim {

struct DraftStandIn {
  std::string config;  ///< the zoo draft's config.json ("" when none stands in)
  std::string note;    ///< why it stands in, in words ("" when it is the target's own default draft)
};

/// The zoo draft that `remote` (a draft id or path not held here) names on the target at
/// `target_config` (a zoo config path): the target's NextN layer when the name says NextN or MTP,
/// its DRAFT-SUFFIX folder (eagle3-angelslim) when the name holds SUFFIX; none otherwise.
DraftStandIn named_zoo_draft(const std::string& target_config, const std::string& remote);

/// The zoo's MODEL/DRAFT name of a draft config path inside models/ (llama-3.1-70b/eagle3).
std::string zoo_entry_name(const std::string& draft_config);

/// For a target whose zoo folder holds no EAGLE-3 draft: the draft of another zoo model with the
/// same architecture (model type, layers, hidden, intermediate, heads, vocabulary), or none.
DraftStandIn same_architecture_draft(const std::string& target_config);

}  // namespace specsim
