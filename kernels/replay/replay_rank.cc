// One rank's replay (every mode goes through replay_rank) and the one-GPU entry point.
#include "replay_rank.h"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "cuda_check.h"
#include "phase_runner.h"
#include "rank_gpu.h"

namespace specsim::replay {
namespace detail {

ReplayMeasurement replay_rank(const CyclePlan& ran, const CyclePlan& full, const ReplayOptions& opt,
                              const RankSetup& rs) {
  if (ran.phases.size() != full.phases.size())
    throw std::logic_error("replay_rank: the replayed plan and the full plan differ in phases");
  RankGpu g;
  ReplayMeasurement out;
  out.device = init_rank_gpu(g, rs.device);
  out.iters = opt.iters, out.warmup = opt.warmup;
  g.rank = rs.rank, g.world = rs.world, g.nccl = rs.nccl, g.barrier = rs.barrier;
  g.car = rs.car, g.car_variant = rs.car_variant, g.car_fused = rs.car_fused;
  for (std::size_t i = 0; i < ran.phases.size(); ++i) {
    const PhasePlan& ph = ran.phases[i];
    PhaseMeasurement m = run_phase(g, ph, opt);
    m.collectives_skipped = full.phases[i].kernels() - ph.kernels();
    out.phases.push_back(std::move(m));
  }
  GPU_CHECK(cudaStreamSynchronize(g.stream));
  if (g.car) g.car->check();
  if (!g.fp8) out.notes.push_back("this GPU has no fp8 tensor cores: fp8 GEMMs ran as bf16");
  return out;
}

std::array<double*, 7> rank_max_fields(PhaseMeasurement& m) {
  return {&m.us, &m.gemm_us, &m.attention_us, &m.other_us, &m.allreduce_us, &m.allgather_us, &m.bare_gemm_chain_us};
}

std::string rotation_note() {
  return fmt::format("weights and KV rotate so each is re-read only after {}x the L2 of other traffic",
                     kRotateL2Multiple);
}

void require_nvls_off() {
  const char* v = std::getenv("NCCL_NVLS_ENABLE");
  if (!v || std::strcmp(v, "0") != 0)
    throw std::runtime_error(
        "NCCL_NVLS_ENABLE must be 0 before NCCL starts (NVLink multicast stays off); the program sets it");
}

}  // namespace detail

ReplayMeasurement replay_plan(const CyclePlan& plan, const ReplayOptions& opt) {
  ReplayMeasurement out = detail::replay_rank(strip_collectives(plan), plan, opt, detail::RankSetup{});
  out.notes.push_back(detail::rotation_note());
  return out;
}

}  // namespace specsim::replay
