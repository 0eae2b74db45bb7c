// The multi-process replay under mpirun: MPI set-up (rank, node-local rank, agreement, abort),
// the communicators (NCCL id from rank 0 over MPI_Bcast; custom all-reduce IPC handles over
// MPI_Allgather), one rank's replay through the shared replay_rank (replay_rank.cc), and the
// reduction of every rank's phase times to rank 0. Built without MPI, MpiSession throws.
#include "replay_mpi.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include "cuda_check.h"
#include "plan/replay_measurement.h"
#include "replay_rank.h"

#ifdef SPECSIM_CAR_MPI
#include <mpi.h>
#endif

namespace specsim::replay {

bool mpi_built() { return car::built_with_mpi(); }

#ifdef SPECSIM_CAR_MPI
namespace {
void mpi_check(int rc, const char* call) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(fmt::format("{} failed (MPI error {})", call, rc));
}
#define REPLAY_MPI(x) mpi_check((x), #x)
}  // namespace

MpiSession::MpiSession() {
  int init = 0;
  MPI_Initialized(&init);
  if (init) throw std::logic_error("MpiSession: MPI is already initialized");
  REPLAY_MPI(MPI_Init(nullptr, nullptr));
  REPLAY_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &place_.rank));
  REPLAY_MPI(MPI_Comm_size(MPI_COMM_WORLD, &place_.world));
  MPI_Comm node;
  REPLAY_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, place_.rank, MPI_INFO_NULL, &node));
  REPLAY_MPI(MPI_Comm_rank(node, &place_.local_rank));
  REPLAY_MPI(MPI_Comm_size(node, &place_.local_size));
  MPI_Comm_free(&node);
  place_.nodes = sum(place_.local_rank == 0 ? 1 : 0);
}

MpiSession::~MpiSession() {
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) MPI_Finalize();
}

int MpiSession::first_rank_with(bool mine) const {
  int v = mine ? place_.rank : place_.world, lowest = place_.world;
  REPLAY_MPI(MPI_Allreduce(&v, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  return lowest < place_.world ? lowest : -1;
}

int MpiSession::sum(int mine) const {
  int total = 0;
  REPLAY_MPI(MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  return total;
}

void MpiSession::barrier() const { REPLAY_MPI(MPI_Barrier(MPI_COMM_WORLD)); }

void MpiSession::abort(int code) const { MPI_Abort(MPI_COMM_WORLD, code); }
#else
MpiSession::MpiSession() {
  throw std::runtime_error("this specsim was built without MPI (find_package(MPI) found none)");
}
MpiSession::~MpiSession() = default;
int MpiSession::first_rank_with(bool mine) const { return mine ? 0 : -1; }
int MpiSession::sum(int mine) const { return mine; }
void MpiSession::barrier() const {}
void MpiSession::abort(int) const {}  // no MPI job to end (the constructor already threw)
#endif

bool MpiSession::any(bool mine) const { return first_rank_with(mine) >= 0; }

namespace {
#ifdef SPECSIM_CAR_MPI
/// Ranks sharing one GPU time-slice it: a peer can stay descheduled far longer than the default
/// spin bound (same bound as gpu_car_mpi, which runs 4 ranks on one GPU).
constexpr std::uint64_t kSharedGpuTimeoutNs = 30'000'000'000ull;

/// The plan without its all-gathers (ranks sharing a GPU have no NCCL to run them).
CyclePlan without_allgathers(const CyclePlan& plan) {
  CyclePlan out = plan;
  for (auto& p : out.phases)
    for (auto& b : p.blocks) std::erase_if(b.ops, [](const Op& o) { return o.kind == OpKind::AllGather; });
  return out;
}

/// Largest all-reduce of the plan in bf16 bytes, rounded up to whole MiB.
std::size_t largest_allreduce_bytes(const CyclePlan& plan) {
  double most = 0;
  for (const auto& p : plan.phases)
    for (const auto& b : p.blocks)
      for (const auto& o : b.ops)
        if (o.kind == OpKind::AllReduce) most = std::max(most, std::ceil(o.comm_bytes / 2) * 2);
  const std::size_t mib = std::size_t{1} << 20;
  return (std::size_t(most) + mib - 1) / mib * mib;
}

struct NcclDeleter {
  void operator()(ncclComm* c) const { ncclCommDestroy(c); }
};

ReplayMeasurement run_rank(const CyclePlan& plan, const ReplayOptions& opt, const MpiReplayOptions& mo,
                           const MpiSession& mpi, int ndev, bool shared, int device) {
  const MpiPlace& w = mpi.place();
  car::Variant variant = car::Variant::Auto;
  if (mo.custom) {
    const auto v = car::parse_variant(mo.variant);
    if (!v) throw std::runtime_error("unknown custom all-reduce variant '" + mo.variant + "'");
    variant = *v;
  }
  GPU_CHECK(cudaSetDevice(device));
  // Same order on every rank (shared and custom are agreed): NCCL, then the custom all-reduce.
  std::unique_ptr<ncclComm, NcclDeleter> nccl;
  if (!shared) {
    detail::require_nvls_off();
    ncclUniqueId id{};
    if (w.rank == 0) GPU_CHECK(ncclGetUniqueId(&id));
    REPLAY_MPI(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD));
    ncclComm_t c = nullptr;
    GPU_CHECK(ncclCommInitRank(&c, w.world, id, w.rank));
    nccl.reset(c);
  }
  std::unique_ptr<car::Communicator> car;
  if (mo.custom) {
    car::Options co;
    if (shared) {
      co.timeout_ns = kSharedGpuTimeoutNs;
      co.max_bytes = std::max(co.max_bytes, largest_allreduce_bytes(plan));  // no NCCL to fall back on
    }
    car = car::Communicator::create_mpi(device, co);
  }
  detail::RankSetup rs;
  rs.device = device, rs.rank = w.rank, rs.world = w.world, rs.nccl = nccl.get();
  rs.car = car.get(), rs.car_variant = variant, rs.car_fused = mo.fused_norm;
  rs.barrier = [] { REPLAY_MPI(MPI_Barrier(MPI_COMM_WORLD)); };
  ReplayMeasurement m = detail::replay_rank(shared ? without_allgathers(plan) : plan, plan, opt, rs);

  // Phase and class times: max over ranks, to rank 0 (the same fields the thread mode folds).
  std::vector<double> mine, most;
  for (auto& ph : m.phases)
    for (double* f : detail::rank_max_fields(ph)) mine.push_back(*f);
  most.resize(mine.size());
  REPLAY_MPI(MPI_Reduce(mine.data(), most.data(), int(mine.size()), MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
  const int gpus_used = mpi.sum(w.local_rank == 0 ? std::min(w.local_size, ndev) : 0);
  car.reset();
  nccl.reset();
  if (w.rank != 0) return m;
  std::size_t k = 0;
  for (auto& ph : m.phases)
    for (double* f : detail::rank_max_fields(ph)) *f = most[k++];

  m.gpus = w.world;
  m.allreduce_backend = mo.backend();
  m.launch = fmt::format("{} processes under MPI", w.world);
  m.shared_gpus = shared;
  m.device = shared ? fmt::format("{} ranks on {} GPU(s): {}", w.world, gpus_used, m.device)
                    : fmt::format("{} x {}", w.world, m.device);
  m.notes.push_back(fmt::format(
      "{} processes under MPI ({} node(s), one rank per process, GPU = node-local rank{}); all-reduces through {}, "
      "all-gathers {}; every rank launches each replay after an MPI_Barrier; phase and class times are the slowest "
      "rank's median (MPI_Reduce max to rank 0); per-op times are rank 0's",
      w.world, w.nodes, shared ? " modulo the node's GPUs" : "",
      mo.custom ? "the custom kernel (" + mo.backend() + "), IPC handles over MPI" : std::string("NCCL"),
      shared ? "left out" : "through NCCL (NCCL_NVLS_ENABLE=0, unique id from rank 0 over MPI_Bcast)"));
  if (shared)
    m.notes.push_back(fmt::format(
        "{} ranks share {} GPU(s): NCCL cannot run two ranks on one GPU, so the plan's all-gathers were left out "
        "(collectives_skipped) and the custom all-reduce ran between processes through CUDA IPC; shared-GPU timings "
        "are a functional check, not a performance measurement",
        w.world, gpus_used));
  m.notes.push_back(detail::rotation_note());
  return m;
}
#endif
}  // namespace

ReplayMeasurement replay_plan_mpi(const CyclePlan& plan, const ReplayOptions& opt, const MpiReplayOptions& mo,
                                  const MpiSession& mpi) {
  const MpiPlace& w = mpi.place();
  if (plan.tp != w.world)
    throw std::runtime_error(fmt::format("the plan is tp {}, the MPI job has {} ranks", plan.tp, w.world));
  const int ndev = cuda_device_count();
  // Collective before anything can fail on one rank alone: every rank knows whether any node
  // has more ranks than GPUs (then no rank creates NCCL, which needs one GPU per rank).
  const bool shared = mpi.any(w.local_size > ndev);
  int device = -1;
  try {
    if (ndev < 1) throw std::runtime_error("no CUDA GPU visible");
    if (shared && !mo.custom)
      throw std::runtime_error(
          fmt::format("{} ranks on a node with {} GPU(s): NCCL needs one GPU per rank", w.local_size, ndev));
    device = w.local_rank % ndev;
#ifdef SPECSIM_CAR_MPI
    return run_rank(plan, opt, mo, mpi, ndev, shared, device);
#else
    throw std::runtime_error("this specsim was built without MPI");
#endif
  } catch (const std::exception& e) {
    throw std::runtime_error(device >= 0 ? fmt::format("rank {} (GPU {}): {}", w.rank, device, e.what())
                                         : fmt::format("rank {}: {}", w.rank, e.what()));
  }
}

}  // namespace specsim::replay
