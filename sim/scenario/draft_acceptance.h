#pragma once
// A zoo draft's own acceptance profile: how its acceptance falls with draft depth, where public
// measurements of that draft show it (docs/acceptance.md#a-drafts-depth-decay).
#include <string>

namespace specsim {

/// The per-depth decays a draft profile may state and the acceptance fit may find: beyond them the
/// shape is not an EAGLE draft's.
inline constexpr double kDepthDecayLo = 0.5, kDepthDecayHi = 1.1;

/// The per-depth decay of the draft's acceptance (a_d = a_1 x decay^(d-1)) that `acceptance.json`
/// beside its config.json states (`depth_decay`, a sourced number in [kDepthDecayLo, kDepthDecayHi]); 1 (the same
/// rate at every depth) when there is no such file. InputError naming the file when it is malformed.
double draft_accept_decay(const std::string& draft_config_path);

}  // namespace specsim
