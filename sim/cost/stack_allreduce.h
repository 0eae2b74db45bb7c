#pragma once
// The serving stacks' own all-reduce, as the pinned releases pick it (docs/sources.md#S-stack-allreduce):
// SGLang (custom_all_reduce.py + sgl-kernel's custom_all_reduce.cuh) and vLLM (cuda_communicator.py,
// custom_all_reduce.py, symm_mem.py, all_reduce_utils.py). Each call takes the path the stack takes
// for this GPU, world and payload: its custom kernel one-shot or two-shot, vLLM's torch symmetric
// memory all-reduce, or NCCL where a gate turns the custom kernel off (priced as NCCL, with NCCL's
// anchors, and said in the report). `--allreduce sglang:disable-custom` (what
// --disable-custom-all-reduce gives) turns the custom kernel off as the stack's flag does.
#include <string>

#include "cost/allreduce_model.h"

namespace specsim {

enum class Stack { Sglang, Vllm };

/// What the stack runs for one all-reduce.
struct StackPath {
  enum class Kind { OneShot, TwoShot, SymmMemMultimem, SymmMemTwoShot, Nccl } kind = Kind::Nccl;
  std::string why;  ///< for Nccl: the gate that sent it there
};

/// The path `stack` takes for query `q` (its choice's arg "disable-custom": the custom kernel off).
StackPath stack_path(Stack stack, const AllReduceQuery& q);

/// Its words ("one-shot", "torch symm-mem multimem", "NCCL").
std::string_view stack_path_name(StackPath::Kind k);

/// SGLang's or vLLM's own all-reduce (`--allreduce sglang|vllm[:disable-custom]`).
class StackAllReduce final : public AllReduceModel {
 public:
  explicit StackAllReduce(Stack s) : stack_(s) {}
  double time_us(const AllReduceQuery& q) const override;
  double host_us(const AllReduceQuery& q) const override;
  std::string describe(const AllReduceQuery& q) const override;
  std::string refusal(const AllReduceQuery& q) const override;
  bool takes_nccl_anchors() const override { return true; }  // on the calls it gives to NCCL
  bool nccl_anchored(const AllReduceQuery& q) const override;
  std::string no_kernel_note() const override {
    return "not verified: the stack's own kernels do not run here (compare --allreduce custom or nccl)";
  }

 private:
  Stack stack_;
};

}  // namespace specsim
