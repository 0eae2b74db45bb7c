#include "replay_report/replay_setup.h"

#include <fmt/format.h>

#include "cost/allreduce_model.h"
#include "scenario/custom_ar_policy.h"
#include "util/error.h"

namespace specsim {

AllReduceChoice replay_backend(const RunArgs& args) {
  AllReduceChoice backend;
  if (args.allreduce.size() > 1)
    throw InputError("a multi-GPU replay runs one all-reduce backend; give it once", "--allreduce");
  if (!args.allreduce.empty()) backend = parse_allreduce(args.allreduce.front());
  if (!allreduce_model(backend).replayable())
    throw InputError(
        "a replay runs a real all-reduce: nccl, custom[:VARIANT] or custom:fused, not " + backend.kind_name(),
        "--allreduce");
  if (backend.scoped)
    throw InputError("a replay runs its one all-reduce backend in every phase: leave out the @PHASES", "--allreduce");
  return backend;
}

// The replay has no FlashInfer fused all-reduce: its boundaries would be predicted fused and run apart.
void refuse_flashinfer_fusion(const Scenario& s) {
  if (s.run.flashinfer_fusion_by_default)
    throw InputError(
        "SGLang turns FlashInfer's fused all-reduce on by default for this model and GPU, and a multi-GPU replay "
        "runs no FlashInfer kernel: give --enforce-disable-flashinfer-allreduce-fusion (or --allreduce custom:fused "
        "for a fused layer boundary)",
        "--enforce-disable-flashinfer-allreduce-fusion");
  if (s.run.flashinfer_fusion)
    throw InputError(
        "a multi-GPU replay runs no FlashInfer fused all-reduce; replay --allreduce custom:fused for a fused "
        "layer boundary, or leave the flag out",
        "--enable-flashinfer-allreduce-fusion");
}

// The replay runs the TP group's collectives only: no all-to-all, no DP gather or reduce-scatter.
void refuse_parallel_layout(const Scenario& s) {
  if (s.run.layout.active())
    throw InputError(
        "the GPU replay does not run expert parallelism, DP attention or pipeline stages (no all-to-all, DP "
        "gather, reduce-scatter or stage send/recv in it yet): predict it with specsim run, replay the layout "
        "without these flags",
        s.run.layout.pp > 1                    ? "--pp-size"
        : s.run.layout.dp_attention            ? "--enable-dp-attention"
        : s.run.layout.a2a != A2aBackend::None ? "--moe-a2a-backend"
                                               : "--ep-size");
}

LocalReplay local_replay(const RunArgs& args) {
  LocalReplay l{resolve_scenario(args), AllReduceChoice{}, args.num_gpus.value_or(1)};
  refuse_parallel_layout(l.scenario);
  if (l.gpus > 1 && l.gpus != l.scenario.run.tp_size)
    throw InputError(
        fmt::format("{} GPUs replay one rank each: it must equal --tp-size ({})", l.gpus, l.scenario.run.tp_size),
        "--num-gpus");
  if (l.gpus > 1) l.backend = replay_backend(args), refuse_flashinfer_fusion(l.scenario);
  return l;
}

void check_local_gpus(int gpus, int found) {
  if (gpus > 1 && found < gpus)
    throw InputError(fmt::format("--num-gpus {} needs {} GPUs, found {}", gpus, gpus, found), "replay");
  if (found < 1) throw InputError("no CUDA GPU found", "replay");
}

AllReduceChoice check_mpi_replay(const RunArgs& args, const Scenario& s, const MpiJob& w) {
  const AllReduceChoice backend = replay_backend(args);
  refuse_parallel_layout(s);
  refuse_flashinfer_fusion(s);
  const bool custom = allreduce_model(backend).gpu_runner() == GpuRunner::Custom;
  if (w.world != s.run.tp_size)
    throw InputError(fmt::format("mpirun started {} processes; --mpi runs one rank per process, so start {} "
                                 "(the --tp-size)",
                                 w.world, s.run.tp_size),
                     "mpirun -np");
  if (custom && (w.world < car_policy::kMinRanks || w.world > car_policy::kMaxRanks))
    throw InputError(fmt::format("the custom all-reduce runs {}..{} ranks, this job has {}: use --allreduce nccl",
                                 car_policy::kMinRanks, car_policy::kMaxRanks, w.world),
                     "--allreduce");
  if (w.nodes > 1 && custom)
    throw InputError(fmt::format("the custom all-reduce reaches its peers through CUDA IPC, within one node; this "
                                 "job spans {} nodes: use --allreduce nccl",
                                 w.nodes),
                     "--allreduce");
  if (w.gpus_found < 1) throw InputError("no CUDA GPU found", "replay");
  if (w.local_size > w.gpus_found && !custom)
    throw InputError(fmt::format("{} ranks on a node with {} GPU(s): NCCL needs one GPU per rank; start one rank "
                                 "per GPU, or share GPUs with --allreduce custom (a functional check)",
                                 w.local_size, w.gpus_found),
                     "--allreduce");
  return backend;
}

}  // namespace specsim
