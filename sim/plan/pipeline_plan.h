#pragma once
// Pipeline parallelism in the plan: a target forward's decoder layers cut into stages, and the
// hand-off between consecutive stages as SGLang's pipeline loop runs it (docs/model.md#pipeline-parallelism).
#include <vector>

#include "plan/cycle_plan.h"

namespace specsim {

/// Where the stages sit and what crosses a boundary.
struct PpBoundary {
  double tokens = 0;     ///< tokens of one forward (the micro-batch's)
  int hidden = 0;        ///< the target's hidden size
  int tp = 1;            ///< ranks of one stage (each sends its share to its peer in the next stage)
  int gather_group = 0;  ///< ranks that all-gather the received shares (0: the TP group)
  int num_gpus = 1;      ///< GPUs of the run (pp x tp), in rank order pp_rank * tp + tp_rank
  int nnodes = 1;        ///< nodes they are spread over evenly
};

/// The ops of one stage boundary: for each of the two tensors SGLang's PPProxyTensors carry
/// (hidden_states, residual: tokens x hidden bf16), a send of its 1/tp slice from every rank to its
/// peer (GroupCoordinator.send_tensor_dict with all_gather_group = the attention TP group) and the
/// all-gather of the slices on the receiving stage. `after_stage` is the sending stage (0-based).
OpBlock pp_boundary_block(const PpBoundary& b, int after_stage);

/// `blocks` (a target forward: embed, decoder-layer blocks named dense_layer / moe_layer, head)
/// with its layers cut at the stage boundaries of `stage_layers` and a boundary block between
/// consecutive stages. InputError when the stages do not hold the forward's layers.
std::vector<OpBlock> split_into_stages(const std::vector<OpBlock>& blocks, const std::vector<int>& stage_layers,
                                       const PpBoundary& b);

}  // namespace specsim
