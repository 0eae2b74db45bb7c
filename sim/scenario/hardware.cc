#include "scenario/hardware.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <filesystem>
#include <vector>

#include "scenario/paths.h"
#include "util/error.h"
#include "util/json_io.h"
#include "util/text.h"

namespace specsim {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The sourced numbers of each profile, by key: one table drives parsing (models/hardware/README.md lists them).
struct GpuField {
  const char* key;
  double GpuProfile::*member;
};
constexpr GpuField kGpuFields[] = {
    {"mem_bw_gbps", &GpuProfile::mem_bw_gbps},
    {"mem_gib", &GpuProfile::mem_gib},
    {"l2_mib", &GpuProfile::l2_mib},
    {"peak_bf16_tflops", &GpuProfile::peak_bf16_tflops},
    {"peak_fp16_tflops", &GpuProfile::peak_fp16_tflops},
    {"peak_fp8_tflops", &GpuProfile::peak_fp8_tflops},
    {"peak_fp32_tflops", &GpuProfile::peak_fp32_tflops},
    {"nvlink_bw_gbps", &GpuProfile::nvlink_bw_gbps},
    {"pcie_bw_gbps", &GpuProfile::pcie_bw_gbps},
    {"gemm_compute_efficiency", &GpuProfile::gemm_compute_efficiency},
    {"gemm_memory_efficiency", &GpuProfile::gemm_memory_efficiency},
    {"gemm_fixed_us", &GpuProfile::gemm_fixed_us},
    {"attention_memory_efficiency", &GpuProfile::attention_memory_efficiency},
    {"attention_compute_efficiency", &GpuProfile::attention_compute_efficiency},
    {"attention_fixed_us", &GpuProfile::attention_fixed_us},
    {"elementwise_memory_efficiency", &GpuProfile::elementwise_memory_efficiency},
    {"kernel_min_us", &GpuProfile::kernel_min_us},
    {"kernel_switch_us", &GpuProfile::kernel_switch_us},
    {"graph_launch_us", &GpuProfile::graph_launch_us},
    {"host_launch_us", &GpuProfile::host_launch_us},
    {"nccl_host_launch_us", &GpuProfile::nccl_host_launch_us},
};
struct TopoField {
  const char* key;
  double TopologyProfile::*member;
};
constexpr TopoField kTopoFields[] = {
    {"nccl_p2p_busbw_gbps", &TopologyProfile::nccl_p2p_busbw_gbps},
    {"nccl_shm_busbw_gbps", &TopologyProfile::nccl_shm_busbw_gbps},
    {"nccl_shm_hop_us", &TopologyProfile::nccl_shm_hop_us},
    {"peer_read_latency_us", &TopologyProfile::peer_read_latency_us},
    {"peer_write_latency_us", &TopologyProfile::peer_write_latency_us},
    {"peer_contention_us_per_peer", &TopologyProfile::peer_contention_us_per_peer},
    {"peer_read_bw_gbps", &TopologyProfile::peer_read_bw_gbps},
    {"peer_write_bw_gbps", &TopologyProfile::peer_write_bw_gbps},
    {"barrier_us", &TopologyProfile::barrier_us},
};

// Fields that must be > 0 (the others may be 0: fp8 peak without fp8, no NVLink, zero latency).
bool must_be_positive(std::string_view key) {
  return key == "mem_bw_gbps" || key == "peak_bf16_tflops" || key == "peak_fp16_tflops" || key == "pcie_bw_gbps" ||
         key.find("efficiency") != std::string_view::npos || key == "nccl_p2p_busbw_gbps" ||
         key == "nccl_shm_busbw_gbps" || key == "peer_read_bw_gbps" || key == "peer_write_bw_gbps";
}

double checked(const json& j, const char* key, const std::string& where) {
  const double v = sourced_number(j, key, where);
  const std::string at = where + "." + key;
  if (v < 0) throw InputError("must not be negative", at);
  if (must_be_positive(key) && v <= 0) throw InputError("must be positive", at);
  if (std::string_view(key).find("efficiency") != std::string_view::npos && v > 1.0)
    throw InputError("an efficiency is a fraction in (0, 1]", at);
  return v;
}

// AMD's CDNA parts take NCCL's Hopper (CDNA3) / Blackwell (CDNA4) row of per-architecture LL caps
// for RCCL: an assumption (RCCL's own tuning is not modelled), said in models/hardware/README.md.
GpuArch parse_arch(const std::string& s, const std::string& where) {
  if (s == "cdna3") return GpuArch::Hopper;
  if (s == "cdna4") return GpuArch::Blackwell;
  if (s == "ampere") return GpuArch::Ampere;
  if (s == "ada") return GpuArch::Ada;
  if (s == "hopper") return GpuArch::Hopper;
  if (s == "blackwell") return GpuArch::Blackwell;
  throw InputError("unknown arch '" + s + "': use ampere, ada, hopper, blackwell, cdna3 or cdna4", where + ".arch");
}

ReplayFp8Kernel replay_fp8_from_json(const json& j, const std::string& where) {
  const std::string at = where + ".replay_block_fp8";
  if (!j.is_object()) throw InputError("must be an object of the fitted terms and a source", at);
  ReplayFp8Kernel k;
  k.present = true;
  for (int i = 0; i < kReplayFp8Terms; ++i) {
    if (!j.contains(kReplayFp8Keys[i]) || !j[kReplayFp8Keys[i]].is_number())
      throw InputError(std::string("missing number ") + kReplayFp8Keys[i] + " (specsim-gemmbench prints the block)",
                       at);
    k.coef[i] = j[kReplayFp8Keys[i]].get<double>();
    if (!std::isfinite(k.coef[i]) || k.coef[i] < 0)
      throw InputError("must be finite and >= 0", at + "." + kReplayFp8Keys[i]);
  }
  k.source = json_string(j, "source", at);
  return k;
}

}  // namespace

GpuProfile gpu_from_json(const json& j, const std::string& where) {
  GpuProfile g;
  g.name = json_string(j, "name", where);
  g.description = j.contains("description") ? json_string(j, "description", where) : "";
  const std::string arch = json_string(j, "arch", where);
  g.arch = parse_arch(arch, where);
  g.amd = arch == "cdna3" || arch == "cdna4";
  g.fp8 = json_bool(j, "fp8", where);
  g.p2p = json_bool(j, "p2p", where);
  for (const auto& f : kGpuFields) g.*(f.member) = checked(j, f.key, where);
  if (j.contains("gemm_fp8_block_fixed_us"))  // optional: only where a block-fp8 GEMM was timed
    g.gemm_fp8_block_fixed_us = checked(j, "gemm_fp8_block_fixed_us", where);
  if (j.contains("gemm_fp8_block_us_per_kblock"))
    g.gemm_fp8_block_us_per_kblock = checked(j, "gemm_fp8_block_us_per_kblock", where);
  if (j.contains("gemm_fp8_tensor_fixed_us"))  // optional: only where cuBLASLt's per-tensor fp8 was timed
    g.gemm_fp8_tensor_fixed_us = checked(j, "gemm_fp8_tensor_fixed_us", where);
  // optional, together: only where SGLang's fused-MoE kernel was timed per token count
  if (j.contains("moe_gemm_memory_efficiency") || j.contains("moe_gemm_fixed_us")) {
    g.moe_gemm_memory_efficiency = checked(j, "moe_gemm_memory_efficiency", where);
    g.moe_gemm_fixed_us = checked(j, "moe_gemm_fixed_us", where);
  }
  if (j.contains("moe_gemm16_memory_efficiency") || j.contains("moe_gemm16_fixed_us")) {
    g.moe_gemm16_memory_efficiency = checked(j, "moe_gemm16_memory_efficiency", where);
    g.moe_gemm16_fixed_us = checked(j, "moe_gemm16_fixed_us", where);
  }
  if (j.contains("replay_block_fp8")) g.replay_block_fp8 = replay_fp8_from_json(j["replay_block_fp8"], where);
  if (j.contains("peak_fp4_tflops")) g.peak_fp4_tflops = checked(j, "peak_fp4_tflops", where);  // Blackwell only
  if (j.contains("compute_capability")) {
    g.compute_capability = checked(j, "compute_capability", where);
    if (g.compute_capability < 7 || g.compute_capability > 20)
      throw InputError("a compute capability is in 7.0..20.0 (e.g. 9.0)", where + ".compute_capability");
  }
  if (g.fp8 && g.peak_fp8_tflops <= 0)
    throw InputError("fp8 is true but peak_fp8_tflops is 0", where + ".peak_fp8_tflops");
  return g;
}

TopologyProfile topology_from_json(const json& j, const std::string& where) {
  TopologyProfile t;
  t.name = json_string(j, "name", where);
  t.description = j.contains("description") ? json_string(j, "description", where) : "";
  const std::string link = json_string(j, "link", where);
  if (link == "nvlink")
    t.link = LinkKind::NVLink;
  else if (link == "pcie")
    t.link = LinkKind::PCIe;
  else if (link == "xgmi")
    t.link = LinkKind::XGMI;
  else
    throw InputError("unknown link '" + link + "': use nvlink, pcie or xgmi", where + ".link");
  t.nccl_path = parse_path_type(json_string(j, "nccl_path", where), where + ".nccl_path");
  t.peer_access = json_bool(j, "peer_access", where);
  t.max_gpus = json_int(j, "max_gpus", where);
  if (t.max_gpus < 1 || t.max_gpus > 1024) throw InputError("max_gpus must be in 1..1024", where + ".max_gpus");
  for (const auto& f : kTopoFields) t.*(f.member) = checked(j, f.key, where);
  if (j.contains("multicast")) t.multicast = json_bool(j, "multicast", where);
  if (j.contains("nccl_fit")) t.nccl_fit = parse_nccl_fit(j["nccl_fit"], where + ".nccl_fit");
  if (j.contains("network")) {
    const json& n = j["network"];
    const std::string w = where + ".network";
    t.max_nodes = json_int(n, "max_nodes", w);
    if (t.max_nodes < 1 || t.max_nodes > 1024) throw InputError("max_nodes must be in 1..1024", w + ".max_nodes");
    t.nics_per_node = json_int(n, "nics_per_node", w);
    if (t.nics_per_node < 1 || t.nics_per_node > 64)
      throw InputError("nics_per_node must be in 1..64", w + ".nics_per_node");
    t.nccl_net_bw_gbps = checked(n, "nccl_net_bw_gbps", w);
    if (t.nccl_net_bw_gbps <= 0) throw InputError("must be positive", w + ".nccl_net_bw_gbps");
    t.nccl_net_latency_us = checked(n, "nccl_net_latency_us", w);
    const std::string cpu = json_string(n, "cpu_vendor", w);
    if (cpu != "intel" && cpu != "amd") throw InputError("unknown cpu_vendor '" + cpu + "': use intel or amd", w);
    t.amd_cpu = cpu == "amd";
  }
  return t;
}

namespace {

std::array<double, kNumProtos> proto_row(const json& j, const std::string& where) {
  std::array<double, kNumProtos> r{};
  const char* names[] = {"LL", "LL128", "Simple"};
  for (int p = 0; p < kNumProtos; ++p) r[p] = sourced_number(j, names[p], where);
  return r;
}

}  // namespace

double GpuProfile::peak_tflops(DType d) const {
  switch (d) {
    case DType::FP8: return fp8 ? peak_fp8_tflops : peak_bf16_tflops;
    case DType::FP16: return peak_fp16_tflops;
    case DType::FP32: return peak_fp32_tflops > 0 ? peak_fp32_tflops : peak_bf16_tflops / 16;
    case DType::BF16: return peak_bf16_tflops;
    case DType::INT4: return peak_bf16_tflops;  // W4A16: weights dequantized, bf16 MMAs
    case DType::NVFP4:
    case DType::MXFP4: return peak_fp4_tflops > 0 ? peak_fp4_tflops : peak_bf16_tflops;  // else weight-only
  }
  return peak_bf16_tflops;
}

std::string_view path_type_name(PathType p) {
  constexpr std::string_view names[] = {"NVL", "PIX", "PXB", "PHB", "SYS"};
  return names[static_cast<int>(p)];
}

PathType parse_path_type(std::string_view s, const std::string& where) {
  constexpr std::string_view names[] = {"NVL", "PIX", "PXB", "PHB", "SYS"};
  for (int i = 0; i < 5; ++i)
    if (s == names[i]) return static_cast<PathType>(i);
  throw InputError("unknown NCCL path type '" + std::string(s) + "': use NVL, PIX, PXB, PHB or SYS", where);
}

std::string_view link_name(LinkKind k) {
  switch (k) {
    case LinkKind::NVLink: return "NVLink";
    case LinkKind::PCIe: return "PCIe";
    case LinkKind::XGMI: return "xGMI";
  }
  return "PCIe";
}

std::string_view arch_name(GpuArch a) {
  constexpr std::string_view names[] = {"ampere", "ada", "hopper", "blackwell"};
  return names[static_cast<int>(a)];
}

GpuProfile parse_gpu(const std::string& path) { return gpu_from_json(read_json_file(path), path); }
TopologyProfile parse_topology(const std::string& path) { return topology_from_json(read_json_file(path), path); }

std::string nccl_tuning_path() { return (fs::path(models_dir()) / "nccl" / "tuning.json").string(); }

NcclTuning load_nccl_tuning() {
  const std::string path = nccl_tuning_path();
  const json j = read_json_file(path);
  NcclTuning t;
  const char* algos[] = {"tree", "ring"};
  const char* links[] = {"nvlink", "pcie", "net"};
  const std::string w = path;
  for (int a = 0; a < kNumAlgos; ++a) {
    if (!j.contains("base_latency_us") || !j["base_latency_us"].contains(algos[a]))
      throw InputError("missing base_latency_us." + std::string(algos[a]), w);
    t.base_latency_us[a] = proto_row(j["base_latency_us"][algos[a]], w + ".base_latency_us." + algos[a]);
    for (int l = 0; l < 3; ++l) {
      if (!j.contains("hop_latency_us") || !j["hop_latency_us"].contains(links[l]) ||
          !j["hop_latency_us"][links[l]].contains(algos[a]))
        throw InputError(std::string("missing hop_latency_us.") + links[l] + "." + algos[a], w);
      t.hop_latency_us[l][a] =
          proto_row(j["hop_latency_us"][links[l]][algos[a]], w + ".hop_latency_us." + links[l] + "." + algos[a]);
    }
  }
  const char* arches[] = {"ampere", "ada", "hopper", "blackwell"};
  if (!j.contains("ll_max_bw_gbps")) throw InputError("missing ll_max_bw_gbps", w);
  for (int i = 0; i < 4; ++i)
    t.ll_max_bw_gbps[i] = sourced_number(j["ll_max_bw_gbps"], arches[i], w + ".ll_max_bw_gbps");
  t.ll_bw_fraction = sourced_number(j, "ll_bw_fraction", w);
  t.ll128_bw_fraction = sourced_number(j, "ll128_bw_fraction", w);
  t.tree_bw_fraction = sourced_number(j, "tree_bw_fraction", w);
  t.tree_ll_bw_divisor = sourced_number(j, "tree_ll_bw_divisor", w);
  t.tree_ll128_bw_fraction = sourced_number(j, "tree_ll128_bw_fraction", w);
  t.tree_algbw_per_busbw = sourced_number(j, "tree_algbw_per_busbw", w);
  t.ll128_on_pcie = json_bool(j, "ll128_on_pcie", w);
  if (!j.contains("net")) throw InputError("missing net", w);
  const json& net = j["net"];
  const char* vendors[] = {"intel", "amd"};
  for (int v = 0; v < 2; ++v) {
    const std::string wv = w + ".net." + vendors[v];
    if (!net.contains(vendors[v])) throw InputError("missing net." + std::string(vendors[v]), w);
    t.ll_max_bw_net_gbps[v][0] = sourced_number(net[vendors[v]], "ll_max_bw_2_nodes_gbps", wv);
    t.ll_max_bw_net_gbps[v][1] = sourced_number(net[vendors[v]], "ll_max_bw_more_nodes_gbps", wv);
    t.net_overhead_us[v] = sourced_number(net[vendors[v]], "net_overhead_us", wv);
  }
  t.tree_ll128_bw_fraction_net = sourced_number(net, "tree_ll128_bw_fraction", w + ".net");
  return t;
}

namespace {

// A GPU typed as `given` (lowercase), from the zoo: its profile's file name, and for an alias
// (models/hardware/gpu-aliases.json) the alias's entry, said in `assumed`. `file` is "" when
// neither gpus/ nor the aliases hold it.
struct ZooGpu {
  std::string file;  ///< gpus/<file>.json
  json alias;        ///< the alias's entry (null for a profile of its own)
  /// A variant alias: fields of its own over the profile's, and its own name.
  bool variant() const { return alias.is_object() && alias.contains("fields"); }
};

ZooGpu zoo_gpu(const fs::path& root, const std::string& given, std::vector<std::string>& assumed) {
  if (is_file((root / "gpus" / (given + ".json")).string())) return {given, nullptr};
  const std::string aliases_path = (root / "gpu-aliases.json").string();
  const json j = read_json_file(aliases_path);
  if (!j.contains("aliases") || !j.at("aliases").is_object())
    throw InputError("missing object", aliases_path + ": aliases");
  const json& all = j.at("aliases");
  if (!all.contains(given)) return {"", nullptr};
  const json& a = all.at(given);
  const std::string where = aliases_path + ": aliases." + given;
  if (!a.contains("gpu") || !a.at("gpu").is_string() || !a.contains("why") || !a.at("why").is_string())
    throw InputError("an alias holds {\"gpu\": NAME, \"why\": TEXT}", where);
  const std::string gpu = a.at("gpu").get<std::string>();
  if (!is_file((root / "gpus" / (gpu + ".json")).string())) throw InputError("no profile gpus/" + gpu + ".json", where);
  std::string own;  // a variant's fields of its own, named in the note
  if (a.contains("fields") && a.at("fields").is_object())
    for (const auto& [k, v] : a.at("fields").items()) own += (own.empty() ? " with its own " : ", ") + k;
  assumed.push_back(
      fmt::format("GPU '{}' read as the zoo's {}{}: {}", given, gpu, own, a.at("why").get<std::string>()));
  return {gpu, a};
}

// The profile JSON of `z`: its file, with a variant alias's `fields` (each {value, source}, a
// field the profile has) in place of the profile's, named as the alias.
json zoo_gpu_json(const fs::path& root, const ZooGpu& z, const std::string& given) {
  const std::string path = (root / "gpus" / (z.file + ".json")).string();
  json j = read_json_file(path);
  if (!z.variant()) return j;
  const std::string where = (root / "gpu-aliases.json").string() + ": aliases." + given + ".fields";
  const json& fields = z.alias.at("fields");
  if (!fields.is_object()) throw InputError("expected an object of profile fields", where);
  for (const auto& [k, v] : fields.items()) {
    if (!j.contains(k) || !j.at(k).is_object())
      throw InputError("'" + k + "' is not a sourced field of gpus/" + z.file + ".json", where);
    j[k] = v;
  }
  j["name"] = given;
  j["description"] = j.value("description", std::string()) + ", as the " + given;
  return j;
}

// The topology of one GPU given without one: none enters the price (no collective runs), so the
// GPU's own kind of board is taken, as the header shows.
std::string single_gpu_topology(const GpuProfile& g) {
  if (g.amd) return "xgmi";
  return g.nvlink_bw_gbps > 0 ? "nvswitch" : "pcie-switch";
}

}  // namespace

json gpu_profile_json(const std::string& gpu) {
  const fs::path root = fs::path(models_dir()) / "hardware";
  std::vector<std::string> assumed;
  const std::string given = ascii_lower(gpu);
  const ZooGpu z = zoo_gpu(root, given, assumed);
  if (z.file.empty()) throw InputError("unknown GPU '" + gpu + "'", "--hardware");
  return zoo_gpu_json(root, z, given);
}

Hardware load_hardware(const std::string& spec, int num_gpus, const std::string& flag) {
  Hardware hw;
  hw.spec = spec;
  hw.num_gpus = num_gpus;
  const auto colon = spec.find(':');
  const bool names = !spec.empty() && spec.find('/') == std::string::npos && !is_input_file(spec);
  if (names && (colon != std::string::npos || spec.find('.') == std::string::npos)) {
    const fs::path root = fs::path(models_dir()) / "hardware";
    const std::string given_gpu = ascii_lower(spec.substr(0, colon));
    std::string topo = colon == std::string::npos ? "" : ascii_lower(spec.substr(colon + 1));
    const ZooGpu z = zoo_gpu(root, given_gpu, hw.assumed);
    // a variant alias (fields of its own) keeps its name, so that a saved scenario reads it again
    const std::string gpu = z.variant() ? given_gpu : z.file;
    if (z.file.empty())
      throw InputError(
          fmt::format("unknown GPU '{}': use {}", given_gpu, fmt::join(json_names_in((root / "gpus").string()), ", ")),
          flag);
    hw.gpu = gpu_from_json(zoo_gpu_json(root, z, given_gpu), (root / "gpus" / (z.file + ".json")).string());
    const std::string topologies = fmt::format("{}", fmt::join(json_names_in((root / "topologies").string()), ", "));
    if (topo.empty()) {
      if (num_gpus > 1)
        throw InputError(fmt::format("'{}' names no topology, which prices the collectives between the {} GPUs: "
                                     "give {}:TOPOLOGY (topologies: {})",
                                     spec, num_gpus, gpu, topologies),
                         flag);
      topo = single_gpu_topology(hw.gpu);
      hw.assumed.push_back(fmt::format("one GPU and no topology given: {} is shown, and no collective runs", topo));
    }
    const std::string topo_path = (root / "topologies" / (topo + ".json")).string();
    if (!is_file(topo_path)) throw InputError(fmt::format("unknown topology '{}': use {}", topo, topologies), flag);
    hw.topo = parse_topology(topo_path);
    hw.spec = gpu + ":" + topo;
  } else if (is_input_file(spec)) {
    const json j = read_json_file(spec);
    if (!j.contains("gpu") || !j.contains("topology"))
      throw InputError("a hardware profile file holds {\"gpu\": {...}, \"topology\": {...}}", flag + " " + spec);
    hw.gpu = gpu_from_json(j["gpu"], spec + ": gpu");
    hw.topo = topology_from_json(j["topology"], spec + ": topology");
  } else {
    throw InputError("expected GPU:TOPOLOGY (e.g. h200:nvswitch) or a profile file path; '" + spec + "' is neither",
                     flag);
  }
  hw.nccl = load_nccl_tuning();
  if (hw.topo.link == LinkKind::NVLink && (hw.gpu.nvlink_bw_gbps <= 0 || hw.gpu.amd))
    throw InputError(hw.gpu.name + " has no NVLink: use a pcie topology" + (hw.gpu.amd ? " or xgmi" : ""), flag);
  if (hw.topo.link == LinkKind::XGMI && !hw.gpu.amd)
    throw InputError(hw.gpu.name + " has no xGMI (AMD Infinity Fabric): use nvswitch or a pcie topology", flag);
  if (num_gpus < 1) throw InputError("--num-gpus must be at least 1", "--num-gpus");
  return hw;
}

void set_nodes(Hardware& hw, int nnodes, const std::string& gpus_flag) {
  if (nnodes < 1) throw InputError("--nnodes must be at least 1", "--nnodes");
  if (nnodes > hw.topo.max_nodes)
    throw InputError(
        hw.topo.max_nodes == 1
            ? fmt::format("topology {} is one node; for {} nodes use a cluster topology ({})", hw.topo.name, nnodes,
                          "e.g. --hardware h200:nvswitch-ib")
            : fmt::format("topology {} holds at most {} nodes, not {}", hw.topo.name, hw.topo.max_nodes, nnodes),
        "--nnodes");
  if (hw.num_gpus % nnodes != 0)
    throw InputError(fmt::format("{} GPUs do not split evenly over {} nodes", hw.num_gpus, nnodes), "--nnodes");
  hw.num_nodes = nnodes;
  if (hw.gpus_per_node() > hw.topo.max_gpus)
    throw InputError(fmt::format("{} GPUs do not fit {} (at most {}{})", hw.num_gpus, hw.topo.name,
                                 hw.topo.max_gpus * nnodes, hw.topo.max_nodes > nnodes ? "; raise --nnodes" : ""),
                     gpus_flag);
}

}  // namespace specsim
