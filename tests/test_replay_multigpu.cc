// The multi-GPU replay's CPU side (`specsim replay --num-gpus N`): flag refusals, the no-GPU
// message, and the report when the collectives were measured (predicted keeps them, with the
// replay's backend; calibrate refuses such reports until it can fit them).
#include <catch2/catch.hpp>
#include <filesystem>

#include "evaluate/evaluate_scenario.h"
#include "replay_report/replay_report.h"
#include "scenario/resolve.h"
#include "test_util.h"
#include "util/error.h"

using namespace specsim;
using specsim::test::run_specsim;

namespace {
const std::vector<std::string> kBase = {"replay", "--model-path", "llama-3.1-8b", "--tp-size", "2", "--num-gpus",
                                        "2",      "--hardware",   "h200:nvswitch"};
std::vector<std::string> with(std::vector<std::string> extra) {
  std::vector<std::string> a = kBase;
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}
}  // namespace

TEST_CASE("multi-GPU replay refuses two all-reduce backends and fixed latencies") {
  auto r = run_specsim(with({"--allreduce", "nccl", "--allreduce", "custom"}));
  CHECK(r.exit_code == 2);
  CHECK(r.err == "error: a multi-GPU replay runs one all-reduce backend; give it once (--allreduce)\n");
  r = run_specsim(with({"--allreduce", "fixed:5"}));
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "error: a replay runs a real all-reduce: nccl, custom[:VARIANT] or custom:fused, not fixed (--allreduce)\n");
  // one backend in every phase, and no FlashInfer fusion it could not run: refused, not run otherwise
  r = run_specsim(with({"--allreduce", "custom:fused@verify"}));
  CHECK(r.exit_code == 2);
  CHECK(r.err ==
        "error: a replay runs its one all-reduce backend in every phase: leave out the @PHASES (--allreduce)\n");
  r = run_specsim(with({"--allreduce", "custom", "--enable-flashinfer-allreduce-fusion"}));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("a multi-GPU replay runs no FlashInfer fused all-reduce") != std::string::npos);
  CHECK(r.err.find("(--enable-flashinfer-allreduce-fusion)") != std::string::npos);
  r = run_specsim(
      {"replay", "--model-path", "llama-3.1-8b", "--tp-size", "2", "--num-gpus", "4", "--hardware", "h200:nvswitch"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "error: 4 GPUs replay one rank each: it must equal --tp-size (2) (--num-gpus)\n");
  CHECK(r.out.empty());
}

TEST_CASE("multi-GPU replay without enough GPUs exits 2 naming both counts") {
  const auto r = run_specsim(with({"--allreduce", "nccl"}));
#ifdef SPECSIM_WITH_REPLAY
  if (std::filesystem::exists("/dev/nvidia1")) return;  // two GPUs: it replays for real
  if (std::filesystem::exists("/dev/nvidia0")) {
    CHECK(r.err == "error: --num-gpus 2 needs 2 GPUs, found 1 (replay)\n");
  } else {
    CHECK(r.err == "error: --num-gpus 2 needs 2 GPUs, found 0 (replay)\n");
  }
#else
  CHECK(r.err == "error: this specsim was built without CUDA; rebuild with nvcc, cuBLAS and NCCL (replay)\n");
#endif
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
}

TEST_CASE("a report with measured collectives predicts them with the replay's backend") {
  RunArgs a;
  a.model_path = "llama-3.1-8b", a.tp_size = 2, a.hardware = "h200:nvswitch", a.algorithm = "NONE", a.batch_size = 2;
  const Scenario s = resolve_scenario(a);
  const ScenarioResult r = run_scenario(s);
  ReplayMeasurement m;
  m.device = "test", m.iters = 5, m.gpus = 2;
  for (const char* backend : {"nccl", "custom:auto"}) {
    m.allreduce_backend = backend;
    m.phases.clear();
    for (const auto& ph : r.plan.phases) {
      PhaseMeasurement pm;
      pm.kind = ph.kind, pm.graph = ph.graph, pm.tokens = ph.tokens, pm.kernels = ph.kernels();
      pm.us = 1000, pm.gemm_us = 800, pm.other_us = 50, pm.allreduce_us = 40;
      for (const auto& b : ph.blocks)
        for (const auto& op : b.ops)
          pm.ops.push_back(OpMeasurement{b.name, op.name, b.repeat, op, DType::BF16, 2.0, ""});
      m.phases.push_back(pm);
    }
    const auto j = replay_json(s, r, m);
    CHECK(j["collectives"] == "measured");
    CHECK(j["gpus"] == 2);
    CHECK(j["rank_share"] == false);
    REQUIRE(j["phases"].size() == 1);
    const auto& p = j["phases"][0];
    CHECK(p["collectives_skipped"] == 0);
    CHECK(p["measured"]["allreduce_us"] == 40.0);
    const double pred_ar = p["predicted"]["allreduce_us"].get<double>();
    CHECK(pred_ar > 0);  // tp 2: the plan's all-reduces are predicted, not left out
    CHECK(p["error_pct"]["allreduce"].get<double>() == Approx(100.0 * (pred_ar - 40.0) / 40.0));
    // the collective ops get a prediction too
    bool op_seen = false;
    for (const auto& o : p["ops"])
      if (o["kind"] == "all_reduce") {
        op_seen = true;
        CHECK(o["predicted_us"].get<double>() > 0);
      }
    CHECK(op_seen);
    CHECK(replay_text(j).find("all-reduce") != std::string::npos);
    // calibrate --from reads it back: the measured all-reduces and each collective's payload.
    CHECK(j["allreduce_backend"] == backend);
    const auto back = phases_from_report(j, "report");
    REQUIRE(back.size() == 1);
    CHECK(back[0].allreduce_us == 40.0);
    for (const auto& o : back[0].ops)
      if (o.op.is_collective()) CHECK(o.op.comm_bytes > 0);
  }
}

TEST_CASE("replay --mpi refuses --num-gpus and, outside mpirun, says how to start it") {
  auto r = run_specsim(with({"--mpi"}));  // kBase gives --num-gpus 2
  CHECK(r.exit_code == 2);
  CHECK(r.err == "error: --mpi takes its ranks from mpirun (one per process); leave out --num-gpus (--num-gpus)\n");
  r = run_specsim({"replay", "--mpi", "--model-path", "llama-3.1-8b", "--tp-size", "2", "--hardware", "h200:nvswitch",
                   "--allreduce", "custom"});
  CHECK(r.exit_code == 2);
#if !defined(SPECSIM_WITH_REPLAY)
  CHECK(r.err == "error: this specsim was built without CUDA; rebuild with nvcc, cuBLAS and NCCL (replay)\n");
#elif !defined(SPECSIM_CAR_MPI)
  CHECK(r.err == "error: this specsim was built without MPI; rebuild where CMake finds one (libopenmpi-dev) (--mpi)\n");
#else
  CHECK(r.err ==
        "error: --mpi runs one rank per process: start it as mpirun -np N specsim replay --mpi --tp-size N "
        "... (--mpi)\n");
#endif
  CHECK(r.out.empty());
}

TEST_CASE("a report whose ranks shared a GPU predicts the phase without the all-gathers it left out") {
  RunArgs a;
  a.model_path = "llama-3.1-8b", a.tp_size = 2, a.hardware = "h200:nvswitch", a.algorithm = "NONE", a.batch_size = 2;
  const Scenario s = resolve_scenario(a);
  const ScenarioResult r = run_scenario(s);
  ReplayMeasurement m;
  m.device = "test", m.iters = 5, m.gpus = 2, m.allreduce_backend = "custom:auto";
  for (const auto& ph : r.plan.phases) {
    PhaseMeasurement pm;
    pm.kind = ph.kind, pm.graph = ph.graph, pm.tokens = ph.tokens, pm.kernels = ph.kernels() - 1;
    pm.collectives_skipped = 1;  // the logits all-gather
    pm.us = 1000, pm.gemm_us = 800, pm.other_us = 50, pm.allreduce_us = 40;
    m.phases.push_back(pm);
  }
  const auto all = replay_json(s, r, m);  // as if the all-gathers had run (one thread per GPU)
  m.launch = "2 processes under MPI", m.shared_gpus = true;
  const auto j = replay_json(s, r, m);
  REQUIRE(j["phases"].size() == 1);
  const auto& p = j["phases"][0];
  const auto& q = all["phases"][0];
  CHECK(j["gpus"] == 2);
  CHECK(j["collectives_detail"] ==
        "all-reduces through custom:auto, all-gathers left out (ranks shared a GPU), on 2 ranks (2 processes under "
        "MPI); predicted with the same backend, without the all-gathers");
  CHECK(all["collectives_detail"] ==
        "all-reduces through custom:auto, all-gathers through NCCL, on 2 ranks (one thread per GPU); predicted with "
        "the same backend");
  CHECK(j["shared_gpus"] == true);
  CHECK(all["shared_gpus"] == false);
  CHECK(p["collectives_skipped"] == 1);
  CHECK(p["measured"]["allgather_us"].is_null());
  CHECK(p["predicted"]["allgather_us"] == 0.0);
  const double ag = q["predicted"]["allgather_us"].get<double>();
  REQUIRE(ag > 0);  // the plan has a logits all-gather at tp 2
  CHECK(p["predicted"]["allreduce_us"].get<double>() == Approx(q["predicted"]["allreduce_us"].get<double>()));
  CHECK(p["predicted"]["us"].get<double>() < q["predicted"]["us"].get<double>());
}
