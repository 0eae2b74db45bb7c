#include "plan/pipeline_plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>

#include "plan/op_builders.h"
#include "util/error.h"

namespace specsim {

namespace {

bool is_decoder_layer_block(const OpBlock& b) {
  return std::strcmp(b.name, "dense_layer") == 0 || std::strcmp(b.name, "moe_layer") == 0;
}

// Whether some rank of stage `s` and its peer (the same tp rank of stage s + 1) sit on two nodes.
bool pp_crosses_node(const PpBoundary& b, int s) {
  if (b.nnodes <= 1) return false;
  const int per_node = std::max(1, b.num_gpus / b.nnodes);
  for (int r = s * b.tp; r < (s + 1) * b.tp; ++r)
    if (r / per_node != (r + b.tp) / per_node) return true;
  return false;
}

}  // namespace

OpBlock pp_boundary_block(const PpBoundary& b, int after_stage) {
  constexpr double kBf16 = 2.0;
  const double tensor = b.tokens * b.hidden * kBf16;
  // send_tensor_dict slices a tensor over the gather group only when its elements divide evenly
  const int gather = b.gather_group > 0 ? b.gather_group : b.tp;
  const bool sliced = gather > 1 && std::fmod(b.tokens * b.hidden, double(gather)) == 0.0;
  OpBlock blk{"pp_stage_boundary", 1, {}};
  struct Tensor {
    const char* send;
    const char* gather;
  };
  constexpr Tensor kTensors[] = {{"pp_send_hidden_states", "pp_gather_hidden_states"},
                                 {"pp_send_residual", "pp_gather_residual"}};
  for (const Tensor& t : kTensors) {
    Op send;
    send.name = t.send;
    send.kind = OpKind::SendRecv;
    send.comm_bytes = sliced ? tensor / gather : tensor;
    send.group = 2;
    send.inter_node = pp_crosses_node(b, after_stage);
    blk.ops.push_back(send);
    if (sliced) blk.ops.push_back(ops::all_gather(t.gather, tensor, b.gather_group));
  }
  return blk;
}

std::vector<OpBlock> split_into_stages(const std::vector<OpBlock>& blocks, const std::vector<int>& stage_layers,
                                       const PpBoundary& b) {
  int layers = 0;
  for (const auto& blk : blocks)
    if (is_decoder_layer_block(blk)) layers += blk.repeat;
  if (stage_layers.empty() || std::accumulate(stage_layers.begin(), stage_layers.end(), 0) != layers)
    throw InputError("the pipeline stages hold " +
                         std::to_string(std::accumulate(stage_layers.begin(), stage_layers.end(), 0)) +
                         " layers, the forward " + std::to_string(layers),
                     "--pp-size");
  std::vector<OpBlock> out;
  std::size_t stage = 0;
  int done = 0, end = stage_layers[0];
  for (const auto& blk : blocks) {
    if (!is_decoder_layer_block(blk)) {
      out.push_back(blk);
      continue;
    }
    for (int left = blk.repeat; left > 0;) {
      const int take = std::min(left, end - done);
      if (take > 0) {
        OpBlock piece = blk;
        piece.repeat = take;
        out.push_back(std::move(piece));
        done += take, left -= take;
      }
      if (done == end && stage + 1 < stage_layers.size()) {
        out.push_back(pp_boundary_block(b, static_cast<int>(stage)));
        end += stage_layers[++stage];
      }
    }
  }
  return out;
}

}  // namespace specsim
