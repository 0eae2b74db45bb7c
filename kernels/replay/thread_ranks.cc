// One thread per GPU: the communicators for all ranks (ncclCommInitAll, or the custom all-reduce
// in single-process mode), one thread running replay_rank per rank behind a std::barrier, a
// bounded wait after a rank fails, and the fold of every rank's phase times into one report.
#include "thread_ranks.h"

#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cuda_check.h"
#include "custom_allreduce.h"
#include "replay_rank.h"

namespace specsim::replay {
namespace {

/// What the rank threads share. Each thread holds it by shared_ptr and it holds its own copy of
/// the plan, so threads left blocked in a collective after a failed run's bounded wait (the
/// caller has been told and will end the process) never touch freed memory.
struct ThreadRun {
  ThreadRun(const CyclePlan& p, const ReplayOptions& o, int n)
      : plan(p), opt(o), bar(n), per_rank(std::size_t(n)), errors(std::size_t(n)) {}
  const CyclePlan plan;
  const ReplayOptions opt;
  std::vector<ncclComm_t> comms;
  std::vector<std::unique_ptr<car::Communicator>> cars;  ///< empty: all-reduces through NCCL
  car::Variant variant = car::Variant::Auto;
  bool fused = false;  ///< custom:fused
  std::barrier<> bar;
  std::vector<ReplayMeasurement> per_rank;
  std::atomic<int> done{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::vector<std::string> errors;  ///< per rank, empty when it did not fail; guarded by mu

  /// The first rank's failure, in rank order ("" when none failed).
  std::string first_error() {
    std::lock_guard lock(mu);
    for (const auto& e : errors)
      if (!e.empty()) return e;
    return "";
  }
};

void run_rank_thread(const std::shared_ptr<ThreadRun>& st, int r, int n) {
  try {
    detail::RankSetup rs;
    rs.device = r, rs.rank = r, rs.world = n, rs.nccl = st->comms[std::size_t(r)];
    rs.barrier = [s = st.get()] { s->bar.arrive_and_wait(); };
    if (!st->cars.empty())
      rs.car = st->cars[std::size_t(r)].get(), rs.car_variant = st->variant, rs.car_fused = st->fused;
    // collectives run for real: the plan is replayed whole
    st->per_rank[std::size_t(r)] = detail::replay_rank(st->plan, st->plan, st->opt, rs);
  } catch (const std::exception& e) {
    {
      std::lock_guard lock(st->mu);
      st->errors[std::size_t(r)] = fmt::format("rank {} (GPU {}): {}", r, r, e.what());
    }
    st->failed = true;
    st->bar.arrive_and_drop();  // do not leave the other ranks waiting at the barrier
  }
  ++st->done;
}

}  // namespace

ReplayMeasurement replay_plan_multi_gpu(const CyclePlan& plan, const ReplayOptions& opt, const MultiGpuOptions& mg) {
  const int n = mg.gpus;
  if (n < 2 || n > cuda_device_count())
    throw std::runtime_error(fmt::format("a multi-GPU replay needs 2..{} GPUs, asked for {}", cuda_device_count(), n));
  if (plan.tp != n) throw std::runtime_error(fmt::format("the plan is tp {}, the replay has {} GPUs", plan.tp, n));
  detail::require_nvls_off();
  auto st = std::make_shared<ThreadRun>(plan, opt, n);
  std::vector<int> devs(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) devs[std::size_t(r)] = r;
  st->comms.resize(std::size_t(n));
  GPU_CHECK(ncclCommInitAll(st->comms.data(), n, devs.data()));
  if (mg.custom) {
    const auto v = car::parse_variant(mg.variant);
    if (!v) throw std::runtime_error("unknown custom all-reduce variant '" + mg.variant + "'");
    st->variant = *v;
    st->fused = mg.fused_norm;
    st->cars = car::Communicator::create_single_process(devs);
  }

  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back(run_rank_thread, st, r, n);
  // A rank that failed can leave its peers blocked inside a collective, which no one can cancel:
  // after a failure give the others a bounded time, then leave them and tell the caller.
  std::chrono::steady_clock::time_point t_fail{};
  while (st->done.load() < n) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!st->failed.load()) continue;
    const auto now = std::chrono::steady_clock::now();
    if (t_fail == std::chrono::steady_clock::time_point{}) t_fail = now;
    if (now - t_fail > std::chrono::duration<double>(mg.stuck_wait_s)) {
      for (auto& t : threads) t.detach();
      throw StuckRanksError(
          fmt::format("{}; the other ranks did not finish within {:g} s of it", st->first_error(), mg.stuck_wait_s));
    }
  }
  for (auto& t : threads) t.join();
  if (const std::string e = st->first_error(); !e.empty()) throw std::runtime_error(e);

  ReplayMeasurement out = st->per_rank[0];
  out.gpus = n;
  out.allreduce_backend = mg.backend();
  out.device = fmt::format("{} x {}", n, st->per_rank[0].device);
  for (int r = 1; r < n; ++r)
    for (std::size_t i = 0; i < out.phases.size(); ++i) {
      const auto a = detail::rank_max_fields(out.phases[i]);
      const auto b = detail::rank_max_fields(st->per_rank[std::size_t(r)].phases[i]);
      for (std::size_t f = 0; f < a.size(); ++f) *a[f] = std::max(*a[f], *b[f]);
    }
  out.notes.push_back(
      fmt::format("{} GPUs, one thread per GPU (rank r on GPU r); all-reduces through {}, all-gathers "
                  "through NCCL (NCCL_NVLS_ENABLE=0); every rank launches each replay after a "
                  "barrier; phase and class times are the slowest rank's median; per-op times are "
                  "rank 0's",
                  n, mg.custom ? "the custom kernel (" + mg.backend() + ")" : std::string("NCCL")));
  out.notes.push_back(detail::rotation_note());
  st->cars.clear();
  for (auto c : st->comms) ncclCommDestroy(c);
  return out;
}

}  // namespace specsim::replay
