// Communicator: buffer registration for the three modes (virtual ranks, one thread per GPU,
// one process per GPU over CUDA IPC), refusal before launch, dispatch, and turning the
// kernels' error words into exceptions.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "car_fused_args.h"
#include "car_kernels.h"
#include "car_layout.h"
#include "car_rendezvous.h"
#include "cuda_check.h"
#include "custom_allreduce.h"

namespace specsim::car {

static_assert(static_cast<int>(FusedVariant::Cluster) == detail::kFusedCluster &&
                  static_cast<int>(FusedVariant::ClusterPush) == detail::kFusedClusterPush &&
                  static_cast<int>(FusedVariant::Block) == detail::kFusedBlock &&
                  static_cast<int>(FusedVariant::Split) == detail::kFusedSplit &&
                  static_cast<int>(FusedVariant::TwoShot) == detail::kFusedTwoShot,
              "FusedVariant and FusedMode name the kernels in one order");

namespace {

/// The project's one CUDA check (cuda_check.h), under this file's name for it.
#define CAR_CUDA(call) GPU_CHECK(call)

/// Blocks per rank on one real GPU: enough to keep a few links busy without taking the SMs
/// that overlapping compute needs (vLLM uses 36 for the same reason).
constexpr int kPerGpuMaxBlocks = 32;

/// Makes `device` current for a scope (only touching it when it differs).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    CAR_CUDA(cudaGetDevice(&old_));
    if (old_ != device) CAR_CUDA(cudaSetDevice(device));
  }
  ~DeviceGuard() {
    int now = -1;
    if (cudaGetDevice(&now) == cudaSuccess && now != old_) cudaSetDevice(old_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int old_ = 0;
};

std::string describe_error(unsigned long long w, std::uint64_t timeout_ns) {
  const int rank = static_cast<int>((w >> 56) & 15), missing = static_cast<int>((w >> 52) & 15);
  const int bar = static_cast<int>((w >> 48) & 15), block = static_cast<int>((w >> 40) & 255);
  const auto epoch = static_cast<unsigned>(w & 0xffffffffu);
  char buf[256];
  if (bar == detail::kOwnerWait) {
    std::snprintf(buf, sizeof buf,
                  "rank %d waited %.3f s for a slice's reduced values (flag-free call %u, block %d) and their owner, "
                  "rank %d, never sent them (absent, or itself waiting for a missing rank)",
                  rank, static_cast<double>(2 * timeout_ns) * 1e-9, epoch, block, missing);
    return buf;
  }
  char where[64];
  if (bar == detail::kLlWait)
    std::snprintf(where, sizeof where, "for its data (flag-free call %u, block %d)", epoch, block);
  else
    std::snprintf(where, sizeof where, "at barrier %d (epoch %u, block %d)", bar, epoch, block);
  std::snprintf(buf, sizeof buf, "rank %d waited %.3f s %s and rank %d never arrived", rank,
                static_cast<double>(timeout_ns) * 1e-9, where, missing);
  return buf;
}

/// A rank's shared region: zeroed flags and control words, the flag-free slots empty.
char* alloc_region(int device, int world, std::size_t max_bytes) {
  DeviceGuard g(device);
  const std::size_t bytes = region_bytes(world, max_bytes);
  const std::size_t ll = detail::ll_area_bytes(world, max_bytes);
  void* p = nullptr;
  CAR_CUDA(cudaMalloc(&p, bytes));
  CAR_CUDA(cudaMemset(p, 0, bytes - ll));
  CAR_CUDA(cudaMemset(static_cast<char*>(p) + (bytes - ll), detail::kLlEmptyByte, ll));
  CAR_CUDA(cudaDeviceSynchronize());  // initialized before any peer can see the region
  return static_cast<char*>(p);
}

}  // namespace

struct Communicator::Impl {
  int world = 0;
  int rank = 0;
  int device = 0;
  bool virt = false;
  Link link = Link::NVLink;
  Options opt;
  std::size_t slot = 0;
  char* bases[kMaxRanks] = {};             ///< every rank's region as mapped in this process
  std::vector<char*> owned;                ///< regions this process allocated (to cudaFree)
  std::vector<char*> opened;               ///< regions opened through IPC (to close)
  unsigned long long* err_host = nullptr;  ///< pinned, mapped: one word per rank driven here
  unsigned long long* err_dev = nullptr;   ///< the same words as the device sees them
  int ranks_here = 1;                      ///< ranks one launch drives (world in virtual mode)
  int block_cap = kPerGpuMaxBlocks;        ///< blocks per rank
  /// Blocks per rank of the flag-free kernels: up to kMaxBlocks, so that messages up to
  /// kMaxBlocks x ll_threads vectors take one vector per thread (a thread's vectors wait in turn).
  int ll_block_cap = kPerGpuMaxBlocks;
  /// Clusters per rank of the fused all-reduce + RMSNorm (a cluster a row at a time), by cluster
  /// size 1, 2, 4, 8 (index log2) and threads a CTA (index 0: up to kFusedCtaVectors, 1: up to
  /// kFusedMaxThreads), capped so that every cluster of every rank is resident at once.
  int fused_cluster_cap[4][2] = {};
  /// The same caps (row groups a rank) for the cluster-push, split and two-shot variants (index 0, 1, 2), by
  /// the same CTAs a row and threads buckets; and for block (one CTA a row, counted at
  /// kFusedBlockMaxThreads threads, where the fewest fit). Computed at creation, so that a call
  /// (maybe under graph capture) asks the device nothing.
  int fused_group_cap[3][4][2] = {};
  int fused_block_cap = 1;
  /// The split variant's partial words: kFusedPartialWords for each rank driven here, zeroed once.
  unsigned long long* fused_partials = nullptr;
  std::string failure;  ///< first kernel error seen: the communicator is dead

  void init_common() {
    slot = detail::slot_bytes(opt.max_bytes);
    DeviceGuard g(device);
    void* h = nullptr;
    CAR_CUDA(cudaHostAlloc(&h, sizeof(unsigned long long) * kMaxRanks, cudaHostAllocMapped));
    err_host = static_cast<unsigned long long*>(h);
    std::memset(err_host, 0, sizeof(unsigned long long) * kMaxRanks);
    void* d = nullptr;
    CAR_CUDA(cudaHostGetDevicePointer(&d, h, 0));
    err_dev = static_cast<unsigned long long*>(d);
    int sms = 0;
    CAR_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    // every block of every rank on this device must be resident at once, or a spinning block
    // could wait for one that is not scheduled: cap blocks per rank by what fits
    const int resident = sms * detail::max_blocks_per_sm();
    block_cap = std::clamp(resident / ranks_here, 1, virt ? detail::kMaxBlocks : kPerGpuMaxBlocks);
    ll_block_cap = std::clamp(resident / ranks_here, 1, detail::kMaxBlocks);
    // occupancy at the most threads of each bucket (fewer threads a CTA only fit more clusters)
    for (int i = 0, c = 1; i < 4; ++i, c *= 2)
      for (int j = 0; j < 2; ++j) {
        const int threads = j == 0 ? detail::kFusedCtaVectors : detail::kFusedMaxThreads;
        fused_cluster_cap[i][j] = std::clamp(detail::fused_max_groups(detail::kFusedCluster, c, threads) / ranks_here,
                                             1, detail::kMaxBlocks / c);
        constexpr int kModes[3] = {detail::kFusedClusterPush, detail::kFusedSplit, detail::kFusedTwoShot};
        for (int m = 0; m < 3; ++m)
          fused_group_cap[m][i][j] =
              std::clamp(detail::fused_max_groups(kModes[m], c, threads) / ranks_here, 1, detail::kMaxBlocks / c);
      }
    fused_block_cap =
        std::clamp(detail::fused_max_groups(detail::kFusedBlock, 1, detail::kFusedBlockMaxThreads) / ranks_here, 1,
                   detail::kMaxBlocks);
    const std::size_t words =
        sizeof(unsigned long long) * detail::kFusedPartialWords * static_cast<std::size_t>(ranks_here);
    void* fp = nullptr;
    CAR_CUDA(cudaMalloc(&fp, words));
    CAR_CUDA(cudaMemset(fp, 0, words));
    fused_partials = static_cast<unsigned long long*>(fp);
  }

  /// Threads per block of `v`'s kernel for a message of `bytes`. Flag-free, Options::ll_threads 0
  /// (auto): 128 while every thread gets one vector within the block cap (measured faster than 256
  /// at 14-114 KB on 2 H200s, traces/experiments/README.md), else 256 (fewer vectors a thread, which wait in turn).
  int threads_for(Variant v, std::size_t bytes) const {
    if (!car_policy::is_flag_free(v)) return detail::kThreads;
    if (opt.ll_threads != 0) return opt.ll_threads;
    const std::size_t vectors = (bytes + 15) / 16;
    return vectors <= static_cast<std::size_t>(ll_block_cap) * 128 ? 128 : detail::kLlMaxThreads;
  }

  /// Blocks per rank: one 16-byte vector per thread, up to the co-residency cap (computed for
  /// kThreads-thread blocks, so smaller flag-free blocks fit too).
  int blocks_for(std::size_t bytes, Variant v) const {
    const std::size_t vectors = (bytes + 15) / 16;
    const auto threads = static_cast<std::size_t>(threads_for(v, bytes));
    const std::size_t want = (vectors + threads - 1) / threads;
    const int cap = car_policy::is_flag_free(v) ? ll_block_cap : block_cap;
    return static_cast<int>(std::clamp<std::size_t>(want, 1, static_cast<std::size_t>(cap)));
  }

  /// Reads the error words; records and throws the first failure.
  void check() {
    if (!failure.empty()) throw std::runtime_error("custom all-reduce: " + failure);
    std::string msg;
    for (int i = 0; i < ranks_here; ++i) {
      const unsigned long long w = reinterpret_cast<volatile unsigned long long*>(err_host)[i];
      if (w & detail::kErrValid) msg += (msg.empty() ? "" : "; ") + describe_error(w, opt.timeout_ns);
    }
    if (!msg.empty()) {
      failure = msg;
      throw std::runtime_error("custom all-reduce: " + msg);
    }
  }

  void refuse_or_throw(const void* in, void* out, std::size_t count, DType dtype, Variant variant) const {
    CallDesc c;
    c.in = reinterpret_cast<std::uintptr_t>(in);
    c.out = reinterpret_cast<std::uintptr_t>(out);
    c.count = count;
    c.dtype = dtype;
    c.variant = variant;
    c.world = world;
    c.max_bytes = opt.max_bytes;
    if (auto why = refuse_reason(c)) throw std::runtime_error("custom all-reduce refused: " + *why);
  }

  void run(detail::LaunchArgs& a, std::size_t count, DType dtype, Variant variant, cudaStream_t stream) {
    if (!failure.empty())
      throw std::runtime_error(
          "custom all-reduce: communicator unusable after an earlier "
          "failure: " +
          failure);
    check();
    const std::size_t bytes = count * elem_bytes(dtype);
    const Variant v = variant == Variant::Auto ? select_variant(bytes, world, link) : variant;
    a.count = count;
    a.slot = slot;
    a.ll_slot = detail::ll_slot_bytes(opt.max_bytes);
    a.timeout_ns = opt.timeout_ns;
    a.world = world;
    a.ranks = ranks_here;
    a.blocks = blocks_for(bytes, v);
    a.threads = threads_for(v, bytes);
    DeviceGuard g(device);
    CAR_CUDA(detail::launch(a, v, dtype, stream));
  }

  /// Launches the fused kernel for `a` (ranks' pointers set): fills the shared fields.
  void run_fused(detail::FusedLaunchArgs& a, const FusedNormShape& s, cudaStream_t stream) {
    if (!failure.empty())
      throw std::runtime_error("custom all-reduce: communicator unusable after an earlier failure: " + failure);
    check();
    detail::LaunchArgs& b = a.base;
    b.count = s.tokens * s.hidden;
    b.slot = slot;
    b.ll_slot = detail::ll_slot_bytes(opt.max_bytes);
    b.timeout_ns = opt.timeout_ns;
    b.world = world;
    b.ranks = ranks_here;
    // a row group (a cluster, C CTAs or one CTA: car_fused_norm.cu) a row, as many as rows up to the cap
    const FusedGeometry geo = geometry(s);
    a.cluster = geo.parts;
    a.mode = static_cast<int>(geo.variant);
    b.threads = geo.threads;
    b.blocks = geo.blocks;
    for (int r = 0; r < ranks_here; ++r)
      a.f[r].partials = geo.variant == FusedVariant::Split ? fused_partials + r * detail::kFusedPartialWords : nullptr;
    b.rank_fastest = 0;
    a.tokens = s.tokens;
    a.hidden = s.hidden;
    a.eps = s.eps;
    a.quant_inv_scale = 1.0f / s.quant_scale;
    DeviceGuard g(device);
    CAR_CUDA(s.dtype == DType::BF16 ? detail::launch_fused<__nv_bfloat16>(a, stream)
                                    : detail::launch_fused<__half>(a, stream));
  }

  /// The launch shape of a fused call (Communicator::fused_geometry).
  FusedGeometry geometry(const FusedNormShape& s) const {
    const FusedVariant v = resolve_fused_variant(opt.fused_variant, s.tokens);
    if (auto why = fused_variant_refuse_reason(v, s.hidden))
      throw std::runtime_error("custom all-reduce refused: " + *why);
    FusedGeometry g;
    g.variant = v;
    g.parts = fused_cluster(s.hidden);
    g.threads = fused_cta_threads(v, s.hidden);
    const int log2c = g.parts == 1 ? 0 : g.parts == 2 ? 1 : g.parts == 4 ? 2 : 3;
    // occupancy at the most threads of each bucket (fewer threads a CTA only fit more)
    const int bucket = g.threads <= detail::kFusedCtaVectors ? detail::kFusedCtaVectors : detail::kFusedMaxThreads;
    const int j = bucket == detail::kFusedCtaVectors ? 0 : 1;
    int cap = 1;  // row groups a rank
    switch (v) {
      case FusedVariant::Cluster: cap = fused_cluster_cap[log2c][j]; break;
      case FusedVariant::ClusterPush: cap = fused_group_cap[0][log2c][j]; break;
      case FusedVariant::Split: cap = fused_group_cap[1][log2c][j]; break;
      case FusedVariant::TwoShot: cap = fused_group_cap[2][log2c][j]; break;
      case FusedVariant::Block: cap = fused_block_cap; break;
      case FusedVariant::Auto: break;  // resolved above
    }
    const std::size_t groups = std::min<std::size_t>(s.tokens, static_cast<std::size_t>(cap));
    g.blocks = static_cast<int>(groups) * (v == FusedVariant::Block ? 1 : g.parts);
    g.rows_per_group = (s.tokens + groups - 1) / groups;
    return g;
  }

  detail::RankPtrs rank_ptrs(int r) const {
    detail::RankPtrs p{};
    for (int q = 0; q < world; ++q) p.base[q] = bases[q];
    p.err = err_dev + (virt ? r : 0);
    p.rank = r;
    p.absent = (virt && r == opt.debug_absent_rank) ? 1 : 0;
    return p;
  }

  ~Impl() {
    int old = 0;
    if (cudaGetDevice(&old) != cudaSuccess) return;
    cudaSetDevice(device);
    cudaDeviceSynchronize();
    for (char* p : opened) cudaIpcCloseMemHandle(p);
    for (char* p : owned) cudaFree(p);
    if (fused_partials) cudaFree(fused_partials);
    if (err_host) cudaFreeHost(err_host);
    cudaSetDevice(old);
  }
};

namespace {

void check_world(int world) {
  if (world < kMinRanks || world > kMaxRanks)
    throw std::runtime_error("custom all-reduce: world size " + std::to_string(world) +
                             " is outside the supported 2..8");
}

void check_options(const Options& opt) {
  if (opt.max_bytes == 0 || opt.max_bytes > (std::size_t{1} << 31))
    throw std::runtime_error("custom all-reduce: Options::max_bytes must be in 1 .. 2 GiB");
  if (opt.timeout_ns == 0) throw std::runtime_error("custom all-reduce: Options::timeout_ns must be positive");
  if (opt.ll_threads != 0 &&
      (opt.ll_threads < 32 || opt.ll_threads > detail::kLlMaxThreads || opt.ll_threads % 32 != 0))
    throw std::runtime_error("custom all-reduce: Options::ll_threads must be 0 (auto) or a multiple of 32 in 32.." +
                             std::to_string(detail::kLlMaxThreads));
  if (!parse_fused_variant(to_string(opt.fused_variant)))
    throw std::runtime_error(
        "custom all-reduce: Options::fused_variant is not one of cluster, cluster-push, block, split, two-shot, auto");
}

}  // namespace

Communicator::Communicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Communicator::~Communicator() = default;

std::unique_ptr<Communicator> Communicator::create_virtual(int world, int device, const Options& opt) {
  check_world(world);
  check_options(opt);
  auto im = std::make_unique<Impl>();
  im->world = world;
  im->device = device;
  im->virt = true;
  im->opt = opt;
  im->link = opt.link.value_or(Link::NVLink);  // one GPU's own memory: the fast end
  im->ranks_here = world;
  im->init_common();
  for (int r = 0; r < world; ++r) {
    im->owned.push_back(alloc_region(device, world, opt.max_bytes));
    im->bases[r] = im->owned.back();
  }
  return std::unique_ptr<Communicator>(new Communicator(std::move(im)));
}

std::vector<std::unique_ptr<Communicator>> Communicator::create_single_process(std::span<const int> devices,
                                                                               const Options& opt) {
  const int world = static_cast<int>(devices.size());
  check_world(world);
  check_options(opt);
  bool all_native_atomics = true;
  for (int a = 0; a < world; ++a) {
    for (int b = 0; b < world; ++b) {
      if (a == b) continue;
      if (devices[a] == devices[b])
        throw std::runtime_error("custom all-reduce: device " + std::to_string(devices[a]) +
                                 " listed twice; use create_virtual for ranks on one GPU");
      int can = 0;
      CAR_CUDA(cudaDeviceCanAccessPeer(&can, devices[a], devices[b]));
      if (!can)
        throw std::runtime_error("custom all-reduce: GPU " + std::to_string(devices[a]) + " cannot access GPU " +
                                 std::to_string(devices[b]) + "'s memory (no peer-to-peer path): use NCCL instead");
      int atomics = 0;
      CAR_CUDA(cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, devices[a], devices[b]));
      all_native_atomics = all_native_atomics && atomics != 0;
      DeviceGuard g(devices[a]);
      const cudaError_t e = cudaDeviceEnablePeerAccess(devices[b], 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();
      } else {
        CAR_CUDA(e);
      }
    }
  }
  std::vector<char*> regions;
  for (int r = 0; r < world; ++r) regions.push_back(alloc_region(devices[r], world, opt.max_bytes));
  // Heuristic: native peer atomics are offered over NVLink and (almost) never over PCIe.
  const Link link = opt.link.value_or(all_native_atomics ? Link::NVLink : Link::PCIe);
  std::vector<std::unique_ptr<Communicator>> out;
  for (int r = 0; r < world; ++r) {
    auto im = std::make_unique<Impl>();
    im->world = world;
    im->rank = r;
    im->device = devices[r];
    im->opt = opt;
    im->link = link;
    im->init_common();
    for (int q = 0; q < world; ++q) im->bases[q] = regions[q];
    im->owned.push_back(regions[r]);
    out.push_back(std::unique_ptr<Communicator>(new Communicator(std::move(im))));
  }
  return out;
}

namespace {
/// How a multi-process rank learns its peers' records: the Unix socket or MPI_Allgather.
using Exchange = std::vector<detail::JoinRecord> (*)(const std::string& dir, const std::string& tag,
                                                     const detail::JoinRecord& mine, double timeout_s);
std::vector<detail::JoinRecord> exchange_mpi(const std::string&, const std::string&, const detail::JoinRecord& mine,
                                             double) {
  return detail::mpi_exchange(mine);
}

std::unique_ptr<Communicator::Impl> multi_process_impl(int rank, int world, int device,
                                                       const std::string& rendezvous_dir, const std::string& tag,
                                                       const Options& opt, double join_timeout_s, Exchange exchange);
}  // namespace

std::unique_ptr<Communicator> Communicator::create_mpi(int device, const Options& opt) {
  int rank = -1, world = 0;
  detail::mpi_rank_world(rank, world);  // throws without MPI or before MPI_Init
  return std::unique_ptr<Communicator>(
      new Communicator(multi_process_impl(rank, world, device, "", "", opt, 0.0, &exchange_mpi)));
}

std::unique_ptr<Communicator> Communicator::create_multi_process(int rank, int world, int device,
                                                                 const std::string& rendezvous_dir,
                                                                 const std::string& tag, const Options& opt,
                                                                 double join_timeout_s) {
  // Under mpirun with MPI up, MPI carries the handles; otherwise the Unix-socket rendezvous.
  const bool mpi = launched_by_mpirun() && detail::mpi_initialized();
  return std::unique_ptr<Communicator>(new Communicator(multi_process_impl(
      rank, world, device, rendezvous_dir, tag, opt, join_timeout_s, mpi ? &exchange_mpi : &detail::rendezvous)));
}

namespace {
std::unique_ptr<Communicator::Impl> multi_process_impl(int rank, int world, int device,
                                                       const std::string& rendezvous_dir, const std::string& tag,
                                                       const Options& opt, double join_timeout_s, Exchange exchange) {
  check_world(world);
  check_options(opt);
  if (rank < 0 || rank >= world)
    throw std::runtime_error("custom all-reduce: rank " + std::to_string(rank) + " is outside 0.." +
                             std::to_string(world - 1));
  auto im = std::make_unique<Communicator::Impl>();
  im->world = world;
  im->rank = rank;
  im->device = device;
  im->opt = opt;
  im->init_common();
  char* mine = alloc_region(device, world, opt.max_bytes);
  im->owned.push_back(mine);
  im->bases[rank] = mine;

  detail::JoinRecord rec{};
  rec.magic = detail::kJoinMagic;
  rec.world = world;
  rec.rank = rank;
  rec.pid = static_cast<std::int32_t>(::getpid());
  CAR_CUDA(cudaDeviceGetPCIBusId(rec.pci_bus_id, sizeof rec.pci_bus_id, device));
  {
    DeviceGuard g(device);
    CAR_CUDA(cudaIpcGetMemHandle(&rec.region, mine));
  }
  const auto table = exchange(rendezvous_dir, tag, rec, join_timeout_s);

  bool same_gpu = true;
  DeviceGuard g(device);
  for (int q = 0; q < world; ++q) {
    same_gpu = same_gpu && std::strcmp(table[q].pci_bus_id, rec.pci_bus_id) == 0;
    if (q == rank) continue;
    void* p = nullptr;
    const cudaError_t e = cudaIpcOpenMemHandle(&p, table[q].region, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess)
      throw std::runtime_error("custom all-reduce: rank " + std::to_string(rank) + " cannot map rank " +
                               std::to_string(q) + "'s buffer (GPU " + table[q].pci_bus_id + ", pid " +
                               std::to_string(table[q].pid) + "): " + cudaGetErrorString(e) +
                               " (no peer-to-peer path?)");
    im->opened.push_back(static_cast<char*>(p));
    im->bases[q] = static_cast<char*>(p);
  }
  // Ranks sharing one GPU reach each other at device-memory speed; across GPUs, without
  // NVML we cannot tell NVLink from PCIe here, so assume the conservative PCIe thresholds.
  im->link = opt.link.value_or(same_gpu ? Link::NVLink : Link::PCIe);
  return im;
}
}  // namespace

void Communicator::allreduce(const void* in, void* out, std::size_t count, DType dtype, Variant variant,
                             cudaStream_t stream) {
  if (impl_->virt)
    throw std::runtime_error(
        "custom all-reduce refused: a virtual-rank communicator drives "
        "all its ranks at once; call allreduce_virtual");
  impl_->refuse_or_throw(in, out, count, dtype, variant);
  detail::LaunchArgs a{};
  a.r[0] = impl_->rank_ptrs(impl_->rank);
  a.r[0].in = in;
  a.r[0].out = out;
  impl_->run(a, count, dtype, variant, stream);
}

void Communicator::allreduce_virtual(std::span<const void* const> ins, std::span<void* const> outs, std::size_t count,
                                     DType dtype, Variant variant, cudaStream_t stream) {
  if (!impl_->virt)
    throw std::runtime_error(
        "custom all-reduce refused: allreduce_virtual needs a virtual-rank "
        "communicator");
  const auto w = static_cast<std::size_t>(impl_->world);
  if (ins.size() != w || outs.size() != w)
    throw std::runtime_error("custom all-reduce refused: need " + std::to_string(w) + " inputs and outputs, got " +
                             std::to_string(ins.size()) + " and " + std::to_string(outs.size()));
  detail::LaunchArgs a{};
  for (int r = 0; r < impl_->world; ++r) {
    try {
      impl_->refuse_or_throw(ins[r], outs[r], count, dtype, variant);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(std::string(e.what()) + " (virtual rank " + std::to_string(r) + ")");
    }
    a.r[r] = impl_->rank_ptrs(r);
    a.r[r].in = ins[r];
    a.r[r].out = outs[r];
  }
  impl_->run(a, count, dtype, variant, stream);
}

namespace {
detail::FusedRank fused_rank(const FusedNormIo& io) {
  return {io.residual_in, io.residual_out, io.weight, io.quant_out, nullptr};
}
}  // namespace

void Communicator::allreduce_add_rmsnorm(const FusedNormIo& io, const FusedNormShape& shape, cudaStream_t stream) {
  if (impl_->virt)
    throw std::runtime_error(
        "custom all-reduce refused: a virtual-rank communicator drives all its ranks at once; call "
        "allreduce_add_rmsnorm_virtual");
  if (auto why = fused_refuse_reason(io, shape, impl_->world, impl_->opt.max_bytes))
    throw std::runtime_error("custom all-reduce refused: " + *why);
  detail::FusedLaunchArgs a{};
  a.base.r[0] = impl_->rank_ptrs(impl_->rank);
  a.base.r[0].in = io.in;
  a.base.r[0].out = io.norm_out;
  a.f[0] = fused_rank(io);
  impl_->run_fused(a, shape, stream);
}

void Communicator::allreduce_add_rmsnorm_virtual(std::span<const FusedNormIo> io, const FusedNormShape& shape,
                                                 cudaStream_t stream) {
  if (!impl_->virt)
    throw std::runtime_error(
        "custom all-reduce refused: allreduce_add_rmsnorm_virtual needs a virtual-rank communicator");
  if (io.size() != static_cast<std::size_t>(impl_->world))
    throw std::runtime_error("custom all-reduce refused: need " + std::to_string(impl_->world) +
                             " ranks' buffers, got " + std::to_string(io.size()));
  detail::FusedLaunchArgs a{};
  for (int r = 0; r < impl_->world; ++r) {
    if (auto why = fused_refuse_reason(io[r], shape, impl_->world, impl_->opt.max_bytes))
      throw std::runtime_error("custom all-reduce refused: " + *why + " (virtual rank " + std::to_string(r) + ")");
    a.base.r[r] = impl_->rank_ptrs(r);
    a.base.r[r].in = io[r].in;
    a.base.r[r].out = io[r].norm_out;
    a.f[r] = fused_rank(io[r]);
  }
  impl_->run_fused(a, shape, stream);
}

void Communicator::check() { impl_->check(); }

void Communicator::synchronize(cudaStream_t stream) {
  CAR_CUDA(cudaStreamSynchronize(stream));
  impl_->check();
}

FusedGeometry Communicator::fused_geometry(const FusedNormShape& shape) const { return impl_->geometry(shape); }
FusedVariant Communicator::fused_variant() const { return impl_->opt.fused_variant; }

Variant Communicator::resolve(Variant v, std::size_t bytes) const {
  return v == Variant::Auto ? select_variant(bytes, impl_->world, impl_->link) : v;
}
int Communicator::world() const { return impl_->world; }
int Communicator::rank() const { return impl_->rank; }
int Communicator::device() const { return impl_->device; }
bool Communicator::is_virtual() const { return impl_->virt; }
Link Communicator::link() const { return impl_->link; }
std::size_t Communicator::max_bytes() const { return impl_->opt.max_bytes; }
int Communicator::blocks_for(std::size_t bytes, Variant v) const { return impl_->blocks_for(bytes, resolve(v, bytes)); }
int Communicator::threads_for(std::size_t bytes, Variant v) const {
  return impl_->threads_for(resolve(v, bytes), bytes);
}

}  // namespace specsim::car
