#pragma once
// GPU, interconnect and NCCL-constant profiles, read from models/hardware/ and models/nccl/.
// Every number there carries a source; see models/hardware/README.md for each field.
#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "scenario/dtype.h"
#include "scenario/nccl_curve.h"

namespace specsim {

enum class GpuArch { Ampere, Ada, Hopper, Blackwell };
/// NVLink (NVSwitch), PCIe, or AMD's xGMI (Infinity Fabric: every GPU linked to every other).
enum class LinkKind { NVLink, PCIe, XGMI };
/// A GPU-to-GPU fabric that joins every pair directly or through a switch (NVLink, xGMI): what the
/// stacks' custom all-reduce gate calls "fully connected", and NCCL's (RCCL's) fast-link row.
constexpr bool gpu_fabric(LinkKind k) { return k == LinkKind::NVLink || k == LinkKind::XGMI; }
std::string_view link_name(LinkKind k);
/// NCCL's path types between two GPUs, nearest first.
enum class PathType { NVL, PIX, PXB, PHB, SYS };

/// Terms of the fitted price of the GPU replay's block-scaled fp8 GEMM (sim/cost/replay_fp8_cost.h).
inline constexpr int kReplayFp8Terms = 7;
/// Their names in a profile's "replay_block_fp8" block.
inline constexpr std::array<const char*, kReplayFp8Terms> kReplayFp8Keys = {
    "fixed_us",      "us_per_mb_m8",      "us_per_mb_m16", "us_per_mb_m32",
    "us_per_mb_m64", "us_per_1k_w_tiles", "us_per_kblock"};
/// The GPU replay's own block-scaled fp8 GEMM on this GPU, fitted to specsim-gemmbench's rows on
/// it (optional; absent: the replay is priced with gemm_fp8_block_*): us = coef . terms, the terms
/// being 1, weight MB at M <= 8 / 16 / 32 / 64, thousands of 16-row W tiles, blocks of 128 of K.
struct ReplayFp8Kernel {
  bool present = false;
  std::array<double, kReplayFp8Terms> coef{};
  std::string source;  ///< the command, machine and date of the bench it was fitted to
};

struct GpuProfile {
  std::string name, description;
  GpuArch arch = GpuArch::Hopper;
  bool fp8 = false;  ///< tensor cores run fp8
  bool p2p = false;  ///< driver allows peer memory access
  bool amd = false;  ///< an AMD Instinct GPU (arch cdna3/cdna4): ROCm, RCCL, HIP kernels
  double mem_bw_gbps = 0, mem_gib = 0, l2_mib = 0;
  double peak_bf16_tflops = 0, peak_fp16_tflops = 0, peak_fp8_tflops = 0, peak_fp32_tflops = 0;
  double nvlink_bw_gbps = 0, pcie_bw_gbps = 0;
  double gemm_compute_efficiency = 0, gemm_memory_efficiency = 0, gemm_fixed_us = 0;
  double attention_memory_efficiency = 0, attention_compute_efficiency = 0, attention_fixed_us = 0;
  double elementwise_memory_efficiency = 0;
  double kernel_switch_us = 0;  ///< GPU gap when a kernel follows one of another class, back to back
  double kernel_min_us = 0, graph_launch_us = 0, host_launch_us = 0, nccl_host_launch_us = 0;
  double gemm_fp8_block_fixed_us = 0;  ///< a block-scaled fp8 GEMM's fixed cost (optional; 0: gemm_fixed_us)
  /// The block-scaled fp8 GEMM's serial cost per 128-wide block of K at small M (each CTA walks
  /// the whole K with its scales), on top of its fixed cost (optional; 0: none).
  double gemm_fp8_block_us_per_kblock = 0;
  /// cuBLASLt's per-tensor-scaled fp8 GEMM's fixed cost, what the GPU replay runs for an fp8 GEMM
  /// (optional; 0: gemm_fixed_us).
  double gemm_fp8_tensor_fixed_us = 0;
  /// SGLang's Triton fused-MoE expert GEMM (optional; efficiency 0: priced as a dense GEMM): its
  /// fixed cost per launch and its share of the HBM bandwidth, fitted to a measured per-M table.
  double moe_gemm_fixed_us = 0, moe_gemm_memory_efficiency = 0;
  /// The same kernel on 16-bit expert weights, where it was timed apart (optional, together;
  /// efficiency 0: the moe_gemm_* pair prices every dtype).
  double moe_gemm16_fixed_us = 0, moe_gemm16_memory_efficiency = 0;
  /// Dense FP4 tensor peak (NVFP4/MXFP4 with fp4 activations), TFLOP/s (optional; 0: no fp4 tensor
  /// cores, 4-bit weights are dequantized and run at the 16-bit rate).
  double peak_fp4_tflops = 0;
  /// The replay's own block-fp8 kernel (optional), and whether fp8 GEMMs are priced as it (set for
  /// a replay's prediction only: sim/replay_report).
  ReplayFp8Kernel replay_block_fp8;
  bool price_as_replay_fp8 = false;
  /// Attention ops marked as a serving stack's own kernel (Op::attention_kernel: FlashInfer's, FA3's) are
  /// priced as that kernel; off for a replay's prediction, which prices the kernel the replay ran.
  bool price_stack_attention = true;
  /// CUDA compute capability, e.g. 9.0 (optional; 0: unknown). vLLM picks its all-reduce limits by it.
  double compute_capability = 0;
  /// Dense peak for a GEMM whose weights are `d` (fp8 falls back to bf16 where not supported; int4
  /// is W4A16, bf16 MMAs; nvfp4/mxfp4 run at the fp4 peak where the GPU has one, else at bf16).
  double peak_tflops(DType d) const;
};

struct TopologyProfile {
  std::string name, description;
  LinkKind link = LinkKind::NVLink;
  PathType nccl_path = PathType::NVL;
  bool peer_access = false;
  int max_gpus = 8;
  /// NVLink SHARP multicast objects (NVSwitch): what torch symmetric memory's multimem
  /// all-reduce needs (optional; false where absent).
  bool multicast = false;
  double nccl_p2p_busbw_gbps = 0, nccl_shm_busbw_gbps = 0, nccl_shm_hop_us = 0;
  double peer_read_latency_us = 0, peer_write_latency_us = 0, peer_contention_us_per_peer = 0;
  double peer_read_bw_gbps = 0, peer_write_bw_gbps = 0, barrier_us = 0;
  /// Measured all-reduce curve (`specsim calibrate --nccl-tests`); replaces NCCL's tuning model
  /// for all-reduces at its world size.
  std::optional<NcclFit> nccl_fit;
  /// A cluster of such nodes over a network (optional "network" block; max_nodes 1 without it):
  /// max_gpus is then per node. NICs per node, each NIC's NCCL bandwidth, NCCL's extra per-hop
  /// network latency (graph latencyInter), and the host CPU vendor, which picks NCCL's network
  /// overhead and multi-node LL cap.
  int max_nodes = 1;
  int nics_per_node = 0;
  double nccl_net_bw_gbps = 0, nccl_net_latency_us = 0;
  bool amd_cpu = false;
};

/// NCCL's tuning constants (src/graph/tuning.cc), indexed [algorithm][protocol].
enum NcclAlgo { kTree = 0, kRing = 1, kNumAlgos = 2 };
enum NcclProto { kLL = 0, kLL128 = 1, kSimple = 2, kNumProtos = 3 };
struct NcclTuning {
  std::array<std::array<double, kNumProtos>, kNumAlgos> base_latency_us{};
  /// [link: nvlink, pcie, net][algo][proto]
  std::array<std::array<std::array<double, kNumProtos>, kNumAlgos>, 3> hop_latency_us{};
  std::array<double, 4> ll_max_bw_gbps{};  ///< per GpuArch
  double ll_bw_fraction = 0.5, ll128_bw_fraction = 0.92, tree_bw_fraction = 1.0;
  /// Tree refinements on one node: LL bus bandwidth / tree_ll_bw_divisor (capped by the LL cap),
  /// LL128 x tree_ll128_bw_fraction; a tree's algorithm bandwidth is tree_algbw_per_busbw x busBw.
  double tree_ll_bw_divisor = 3.8, tree_ll128_bw_fraction = 7.0 / 9.0, tree_algbw_per_busbw = 0.5;
  bool ll128_on_pcie = false;
  /// Across nodes: LL cap by host CPU [intel, amd][2 nodes, more], the per-step network post
  /// overhead by host CPU [intel, amd] (x3 for Simple), tree LL128 fraction (instead of 7/9).
  std::array<std::array<double, 2>, 2> ll_max_bw_net_gbps{};
  std::array<double, 2> net_overhead_us{};
  double tree_ll128_bw_fraction_net = 120.0 / 128.0;
};

/// The machine a scenario runs on.
struct Hardware {
  std::string spec;  ///< what the user passed (gpu:topology or a path)
  GpuProfile gpu;
  TopologyProfile topo;
  NcclTuning nccl;
  int num_gpus = 8;
  int num_nodes = 1;  ///< --nnodes: num_gpus spread evenly over them
  /// What reading --hardware assumed (a GPU alias, one GPU's topology), in words for the notes.
  std::vector<std::string> assumed;
  /// GPUs per node, and the nodes a group of `world` consecutive ranks spans.
  int gpus_per_node() const { return (num_gpus + num_nodes - 1) / num_nodes; }
  int nodes_spanned(int world) const { return num_nodes <= 1 ? 1 : (world + gpus_per_node() - 1) / gpus_per_node(); }
  /// Per-direction bandwidth of one GPU's link to its peers, GB/s (NVLink or PCIe).
  double link_bw_gbps() const { return gpu_fabric(topo.link) ? gpu.nvlink_bw_gbps : gpu.pcie_bw_gbps; }
};

GpuProfile parse_gpu(const std::string& path);
/// The profile JSON of a GPU named as --hardware takes it (any case, an alias, a variant alias with
/// its own fields), every number with its source; InputError for an unknown name.
nlohmann::json gpu_profile_json(const std::string& gpu);
/// Profiles from parsed JSON (the fuzzers and calibrate use these); `where` prefixes errors.
GpuProfile gpu_from_json(const nlohmann::json& j, const std::string& where);
TopologyProfile topology_from_json(const nlohmann::json& j, const std::string& where);
TopologyProfile parse_topology(const std::string& path);
/// models/nccl/tuning.json: NCCL's tuning constants and the nccl-tests harness's launch cost.
std::string nccl_tuning_path();
NcclTuning load_nccl_tuning();

/// `--hardware GPU:TOPOLOGY` (names under models/hardware/, any case; a GPU alias of
/// models/hardware/gpu-aliases.json; the GPU alone for one GPU) or a path to a combined profile
/// {"gpu": {...}, "topology": {...}}; validates that the GPU can sit on that topology. `spec` of
/// the result is the names read (gpu:topology) or the path.
Hardware load_hardware(const std::string& spec, int num_gpus, const std::string& flag = "--hardware");

/// `--nnodes`: `num_gpus` GPUs over `nnodes` nodes of the topology (evenly, each within max_gpus).
void set_nodes(Hardware& hw, int nnodes, const std::string& gpus_flag);

std::string_view path_type_name(PathType p);
PathType parse_path_type(std::string_view s, const std::string& where);
std::string_view arch_name(GpuArch a);

}  // namespace specsim
