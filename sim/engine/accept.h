#pragma once
// Acceptance: SGLang's "accept len" (accepted draft tokens per verify + the bonus token) and the
// chain formula relating it to a per-token acceptance rate (Leviathan et al. 2023;
// docs/sources.md#S-sglang-decode-log and docs/sources.md#S-chain-acceptance).

namespace specsim {

/// Expected tokens per cycle for a chain of `depth` draft tokens each accepted with rate `a`:
/// (1 - a^(depth+1)) / (1 - a).
double chain_accept_len(double a, int depth);

/// The rate `a` in [0, 1) whose chain_accept_len equals `accept_len` (in [1, depth + 1]).
double chain_accept_rate(double accept_len, int depth);

}  // namespace specsim
