#pragma once
// The MoE block of one rank under expert parallelism (internal to plan/): which experts the rank
// holds, how many token-expert pairs reach them, and the all-to-all that moves the tokens.
#include <vector>

#include "plan/op.h"
#include "scenario/model_spec.h"
#include "scenario/parallel_layout.h"

namespace specsim {

struct EpMoeShape {
  double own_tokens = 1;    ///< tokens this rank routes (its share; every token when the MoE sees all)
  double group_tokens = 1;  ///< distinct tokens over the whole expert-parallel group
  int tp = 1;               ///< ranks in the MoE group (each expert split tp / ep ways)
  ParallelLayout layout;
  double routed_share = 1;  ///< independently routed tokens per token (ForwardShape::routed_share)
};

/// Bytes of one token's hidden state as the all-to-all moves it: DeepEP dispatches fp8 with a
/// 4-byte scale per 128 values (its published setting, SGLang's default), NCCL bf16; the combine
/// returns bf16 (docs/model.md#parallel-layout).
double a2a_token_bytes(A2aBackend b, bool combine, double hidden);

/// Routed pairs the busiest rank computes: group tokens x top-k / ep x the imbalance factor.
double ep_rank_pairs(const ModelSpec& m, const EpMoeShape& s);

/// Router, dispatch (all-to-all backends), the rank's expert GEMMs, combine, and the shared
/// expert (unfused under expert parallelism: replicated on own tokens with an all-to-all
/// backend, tensor-parallel over every token otherwise).
void ep_moe_ops(std::vector<Op>& ops, const ModelSpec& m, DType weights, DType experts, const EpMoeShape& s);

}  // namespace specsim
