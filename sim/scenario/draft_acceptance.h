#pragma once
// A zoo draft's own acceptance profile: how its acceptance falls with draft depth, where public
// measurements of that draft show it (docs/acceptance.md#a-drafts-depth-decay).
#include <string>

namespace specsim {

/// The per-depth decay of the draft's acceptance (a_d = a_1 x decay^(d-1)) that `acceptance.json`
/// beside its config.json states (`depth_decay`, a sourced number in [0.5, 1.1]); 1 (the same
/// rate at every depth) when there is no such file. InputError naming the file when it is malformed.
double draft_accept_decay(const std::string& draft_config_path);

}  // namespace specsim
