#include "cost/stack_allreduce.h"

#include <fmt/format.h>

#include <algorithm>

#include "cost/custom_ar_model.h"
#include "cost/nccl_model.h"

namespace specsim {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kKiB = 1024.0;
constexpr double kBufferBytes = 8192 * 1024;  // both stacks' max_size: 8192 * 1024
// SGLang on ROCm doubles it ("crossover is at 16MB buffer size for ROCm", custom_all_reduce.py v0.5.2).
constexpr double kSglangHipBufferBytes = 2 * kBufferBytes;
constexpr const char* kDisable = "disable-custom";

bool supported_world(int n) { return n == 2 || n == 4 || n == 6 || n == 8; }

// vLLM's all_reduce_utils.py tables, by compute capability and world: the custom kernel's cap
// when symmetric memory is on, and the symmetric-memory all-reduce's own cap.
double vllm_custom_cap(double cc, int n) {
  if (cc == 9.0) return n == 2 ? 64 * kMiB : n == 4 ? 32 * kMiB : n == 6 ? kMiB / 2 : kMiB / 4;
  if (cc == 10.0) return n <= 4 ? 2 * kMiB : kMiB;
  if (cc == 10.3) return n == 6 ? 8 * kMiB : 4 * kMiB;
  return kBufferBytes;
}
double vllm_symm_cap(double cc, int n) {
  if (cc == 9.0) return n == 4 ? 32 * kMiB : 64 * kMiB;
  if (cc == 10.0) return n == 2 ? 8 * kMiB : n == 4 ? 32 * kMiB : 128 * kMiB;
  if (cc == 10.3) return n == 2 ? 4 * kMiB : n == 8 ? 64 * kMiB : 32 * kMiB;
  return 0;
}
bool vllm_symm_capability(double cc) { return cc == 9.0 || cc == 10.0 || cc == 10.3; }
bool vllm_multimem_world(double cc, int n) { return cc == 9.0 ? n >= 4 : n >= 6; }

// The custom kernel's gates, the same in both stacks (custom_all_reduce.py __init__ and
// should_custom_ar): "" when it runs.
std::string custom_gate(const AllReduceQuery& q, const char* stack) {
  // Both stacks build the custom all-reduce only when every rank is on this node (is_full_nvlink /
  // in_the_same_node_as); across nodes they run NCCL.
  if (q.hw->nodes_spanned(q.world) > 1)
    return fmt::format("{}'s custom all-reduce needs every rank on one node; {} ranks span {} nodes", stack, q.world,
                       q.hw->nodes_spanned(q.world));
  if (!supported_world(q.world))
    return fmt::format("{}'s custom all-reduce runs on 2, 4, 6 or 8 ranks, not {}", stack, q.world);
  if (q.world > 2 && !gpu_fabric(q.hw->topo.link))
    return fmt::format("{} turns its custom all-reduce off on more than two PCIe-only GPUs", stack);
  if (!q.hw->gpu.p2p || !q.hw->topo.peer_access)
    return fmt::format("{}'s P2P check fails ({} on {}: no peer memory access)", stack, q.hw->gpu.name,
                       q.hw->topo.name);
  return "";
}

// sgl-kernel / vLLM custom_all_reduce.cuh: one stage on 2 ranks, or below 512 KB (<= 4 ranks) /
// 256 KB (<= 8 ranks) on full NVLink; two stages above.
StackPath::Kind kernel_stage(const AllReduceQuery& q) {
  if (q.world == 2) return StackPath::Kind::OneShot;
  const bool one = (q.world <= 4 && q.bytes < 512 * kKiB) || (q.world <= 8 && q.bytes < 256 * kKiB);
  return one ? StackPath::Kind::OneShot : StackPath::Kind::TwoShot;
}

// One device copy of `bytes` (read + write), as the stacks' copies into and out of their buffers.
double copy_us(double bytes, const Hardware& hw) {
  const double bw = hw.gpu.mem_bw_gbps * 1e3 * hw.gpu.elementwise_memory_efficiency;  // bytes per us
  return std::max(hw.gpu.kernel_min_us, 2 * bytes / bw);
}

// torch symm-mem multimem all-reduce over NVLink SHARP: each rank reduces its 1/n slice in the
// switch (multimem.ld_reduce) and broadcasts it back (multimem.st), between two barriers. Priced
// on the topology's peer constants; not measured (a guess until timed on a GPU).
double multimem_us(double bytes, int n, const Hardware& hw) {
  const auto& t = hw.topo;
  const double bw = std::min(t.peer_read_bw_gbps, hw.link_bw_gbps()) * 1e3;
  return 2 * t.barrier_us + t.peer_read_latency_us + 2 * (bytes / n) / bw;
}

const char* stack_name(Stack s) { return s == Stack::Sglang ? "SGLang" : "vLLM"; }

}  // namespace

std::string_view stack_path_name(StackPath::Kind k) {
  switch (k) {
    case StackPath::Kind::OneShot: return "custom one-shot";
    case StackPath::Kind::TwoShot: return "custom two-shot";
    case StackPath::Kind::SymmMemMultimem: return "torch symm-mem multimem";
    case StackPath::Kind::SymmMemTwoShot: return "torch symm-mem two-shot";
    case StackPath::Kind::Nccl: break;
  }
  return "NCCL";
}

StackPath stack_path(Stack stack, const AllReduceQuery& q) {
  const bool disabled = q.choice && q.choice->arg == kDisable;
  const char* name = stack_name(stack);
  std::string gate = disabled ? "--disable-custom-all-reduce" : custom_gate(q, name);
  // ROCm (both stacks): the same gates, P2P taken as given over xGMI; vLLM's quick all-reduce is off
  // unless VLLM_ROCM_QUICK_REDUCE_QUANTIZATION is set, and torch symmetric memory is CUDA-only.
  double cap = stack == Stack::Sglang && q.hw->gpu.amd ? kSglangHipBufferBytes : kBufferBytes;
  bool symm = false;
  const double cc = q.hw->gpu.compute_capability;
  if (stack == Stack::Vllm) {
    // torch symmetric memory (VLLM_ALLREDUCE_USE_SYMM_MEM, on by default): needs a listed compute
    // capability, a listed world and multicast objects (NVSwitch); --disable-custom-all-reduce
    // leaves it on.
    symm = vllm_symm_capability(cc) && supported_world(q.world) && q.hw->topo.multicast &&
           q.hw->topo.link == LinkKind::NVLink;
    if (symm) cap = std::min(cap, vllm_custom_cap(cc, q.world));
  }
  if (gate.empty() && q.bytes < cap) return {kernel_stage(q), ""};
  if (gate.empty())
    gate = fmt::format("{:.0f} B is not below its custom all-reduce's {:.0f} KiB limit", q.bytes, cap / kKiB);
  if (symm && q.bytes <= vllm_symm_cap(cc, q.world))
    return {vllm_multimem_world(cc, q.world) ? StackPath::Kind::SymmMemMultimem : StackPath::Kind::SymmMemTwoShot,
            gate};
  return {StackPath::Kind::Nccl, gate};
}

double StackAllReduce::time_us(const AllReduceQuery& q) const {
  const StackPath p = stack_path(stack_, q);
  const Hardware& hw = *q.hw;
  // Eager calls copy the input into the pre-registered IPC buffer first; inside a CUDA graph the
  // input's own address was registered at capture (register_graph_buffers), so no copy.
  const double eager_copy = q.graph ? 0.0 : copy_us(q.bytes, hw);
  switch (p.kind) {
    case StackPath::Kind::OneShot:
      return custom_variant_us(CustomVariant::OneShotPull, q.bytes, q.world, hw) + eager_copy;
    case StackPath::Kind::TwoShot: return custom_variant_us(CustomVariant::TwoShot, q.bytes, q.world, hw) + eager_copy;
    case StackPath::Kind::SymmMemMultimem: return multimem_us(q.bytes, q.world, hw) + 2 * copy_us(q.bytes, hw);
    case StackPath::Kind::SymmMemTwoShot:
      return custom_variant_us(CustomVariant::TwoShot, q.bytes, q.world, hw) + 2 * copy_us(q.bytes, hw);
    case StackPath::Kind::Nccl: break;
  }
  return nccl_allreduce(q.bytes, q.world, hw, *q.nccl).us;
}

double StackAllReduce::host_us(const AllReduceQuery& q) const {
  const StackPath p = stack_path(stack_, q);
  const auto& g = q.hw->gpu;
  switch (p.kind) {
    case StackPath::Kind::OneShot:
    case StackPath::Kind::TwoShot: return 2 * g.host_launch_us;  // the copy into its buffer, the kernel
    case StackPath::Kind::SymmMemMultimem:
    case StackPath::Kind::SymmMemTwoShot: return 3 * g.host_launch_us;  // copy in, all-reduce, copy out
    case StackPath::Kind::Nccl: break;
  }
  return g.nccl_host_launch_us;
}

bool StackAllReduce::nccl_anchored(const AllReduceQuery& q) const {
  return stack_path(stack_, q).kind == StackPath::Kind::Nccl;
}

std::string StackAllReduce::describe(const AllReduceQuery& q) const {
  const StackPath p = stack_path(stack_, q);
  const char* name = stack_name(stack_);
  if (p.kind == StackPath::Kind::Nccl) {
    const auto e = nccl_allreduce(q.bytes, q.world, *q.hw, *q.nccl);
    const std::string nccl = e.fitted ? "a fitted nccl-tests curve"
                                      : fmt::format("{}/{} over {}", nccl_algo_name(e.algo), nccl_proto_name(e.proto),
                                                    e.p2p ? "P2P" : "host memory (SHM)");
    return fmt::format("{} falls back to NCCL: {}; NCCL {} at {:.0f} B", name, p.why, nccl, q.bytes);
  }
  std::string s = fmt::format("{} {} at {:.0f} B", name, stack_path_name(p.kind), q.bytes);
  if (p.kind == StackPath::Kind::SymmMemMultimem || p.kind == StackPath::Kind::SymmMemTwoShot)
    s += fmt::format(" (custom kernel not taken: {}; a guess, not measured)", p.why);
  else
    s += q.graph ? " (graph: buffers registered at capture, no copy)" : " (eager: input copied into its IPC buffer)";
  if (q.hw->gpu.amd && p.kind != StackPath::Kind::Nccl)
    s += fmt::format("; its ROCm kernel over {}, priced on the topology's peer figures (a guess, not measured)",
                     link_name(q.hw->topo.link));
  return s;
}

std::string StackAllReduce::refusal(const AllReduceQuery& q) const {
  if (q.choice && !q.choice->arg.empty() && q.choice->arg != kDisable)
    return fmt::format("unknown argument '{}' (use {}[:{}])", q.choice->arg,
                       stack_ == Stack::Sglang ? "sglang" : "vllm", kDisable);
  return "";
}

}  // namespace specsim
