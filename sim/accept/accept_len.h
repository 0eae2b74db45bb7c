#pragma once
// Acceptance: SGLang's "accept len" (accepted draft tokens per verify + the bonus token) and how a
// per-token acceptance rate relates to it at given draft settings: the chain formula for a chain
// (Leviathan et al. 2023; docs/sources.md#S-sglang-decode-log and docs/sources.md#S-chain-acceptance),
// SGLang's draft tree with the default top-k coverage shape for topk > 1 (docs/acceptance.md).

namespace specsim {

/// Expected tokens per cycle for a chain of `depth` draft tokens each accepted with rate `a`:
/// (1 - a^(depth+1)) / (1 - a).
double chain_accept_len(double a, int depth);

/// The rate `a` in [0, 1) whose chain_accept_len equals `accept_len` (in [1, depth + 1]).
double chain_accept_rate(double accept_len, int depth);

/// Expected accept len at these draft settings for a first-choice rate `a` at depth 1, falling
/// by `decay` a depth (a_d = a x decay^(d-1), capped at 1; 1: the same rate at every depth): the
/// chain formula when topk is 1, SGLang's tree with the default coverage shape otherwise.
double accept_len_at(double a, int steps, int topk, int draft_tokens, double decay = 1.0);

/// The rate `a` whose accept_len_at() at these settings (and decay) equals `accept_len`.
double accept_rate_at(double accept_len, int steps, int topk, int draft_tokens, double decay = 1.0);

}  // namespace specsim
