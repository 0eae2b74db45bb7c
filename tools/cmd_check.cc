// `specsim check --baseline BASELINE.json [run flags]`: reruns the scenario and compares every
// phase time and the tok/s with the baseline (`specsim run --json > BASELINE.json`).
// Exit 0: all within tolerance; 1: something regressed (a diff table says what); 2: bad input.
#include <fmt/format.h>

#include <iostream>

#include "check/check.h"
#include "check/check_replay.h"
#include "cli_common.h"
#include "commands.h"
#include "replay_report/replay_report.h"
#include "report/report.h"
#include "run_trace.h"
#include "util/error.h"
#include "util/json_io.h"
#ifdef SPECSIM_WITH_REPLAY
#include "allreduce_verify.h"
#include "replay_exec.h"
#endif

namespace specsim::cli {

namespace {

// Inputs that differ from the baseline's: refused, or (with --allow-different-settings) noted.
void accept_input_differences(const std::vector<std::string>& diffs, bool allow_different) {
  if (diffs.empty()) return;
  std::string list;
  for (const auto& d : diffs) list += (list.empty() ? "" : "; ") + d;
  if (!allow_different)
    throw InputError("the rerun's inputs differ from the baseline's, so they are not compared: " + list +
                         " (give the baseline's flags, or --allow-different-settings)",
                     "--baseline");
  std::cerr << "note: comparing different inputs (--allow-different-settings): " << list << "\n";
}

// Prints the diff table and the verdict; exit 1 when anything regressed. `what` names the rows.
int verdict(const std::vector<check::CheckRow>& rows, double tol, const char* what, const char* ok_prefix) {
  size_t bad = 0;
  for (const auto& r : rows) bad += r.regressed;
  std::cout << check::check_table(rows);
  if (bad) {
    fmt::print("check: REGRESSED: {} of {} {} worse than the baseline by more than {:g}%\n", bad, rows.size(), what,
               100 * tol);
    return kExitRegression;
  }
  fmt::print("check: ok: {}{} {} within {:g}% of the baseline\n", ok_prefix, rows.size(), what, 100 * tol);
  return kExitOk;
}

// `--replay` (docs/README-check-replay.md): first every distinct all-reduce of the plan through
// every backend the scenario names, checked against a CPU reference (a wrong or unwritten element
// fails the check); then the plan replayed on GPU 0 by the executor of `specsim replay`, and its
// measured phase `us` compared with a replay baseline (`specsim replay -o`).
int check_replay(const RunArgs& args, const nlohmann::json& base, const std::string& where, double tol,
                 bool allow_different, int iters, int warmup) {
  check::validate_replay_report(base, where);
#ifndef SPECSIM_WITH_REPLAY
  (void)args, (void)tol, (void)allow_different, (void)iters, (void)warmup;
  throw InputError("no GPU: this specsim was built without CUDA (rebuild with nvcc, cuBLAS and NCCL)", "--replay");
#else
  if (replay::cuda_device_count() < 1) throw InputError("no GPU: no CUDA device is visible", "--replay");
  const Scenario s = resolve_scenario(args);
  const ScenarioResult r = run_scenario(s);
  auto check_inputs = [&](const nlohmann::json& now) {
    accept_input_differences(check::replay_input_differences(base, now), allow_different);
  };
  {  // the scenario before any GPU time is spent (the device is compared once measured)
    nlohmann::json pre = replay_json(s, r, ReplayMeasurement{});
    pre["device"] = base.value("device", nlohmann::json(nullptr));
    if (!allow_different) check_inputs(pre);
  }

  std::vector<AllReduceChoice> backends;
  for (const auto& c : r.results) {
    if (c.refused.empty())
      backends.push_back(c.backend);
    else
      fmt::print("allreduce verify: {}: not verified: the engine refuses it here: {}\n", c.backend.label(), c.refused);
  }
  size_t failed = 0;
  for (const auto& v : replay::verify_allreduces(distinct_allreduces(r.plan), r.plan.tp, backends)) {
    fmt::print("{}\n", verify_line(v));
    failed += v.failed();
  }
  if (failed) {
    fmt::print("check: FAILED: {} all-reduce verification(s) wrong or erroring; timing skipped\n", failed);
    return kExitRegression;
  }

  replay::ReplayOptions opt;
  opt.iters = iters, opt.warmup = warmup, opt.op_passes = 1, opt.gemm_chain = false;  // phase us is what is compared
  const nlohmann::json now = replay_json(s, r, replay::replay_plan(r.plan, opt));
  check_inputs(now);
  fmt::print("comparing measured phase us (GPU replay on {}) with the replay baseline {}\n", now.value("device", "?"),
             where);
  return verdict(check::compare_replay_reports(base, now, tol), tol, "phases", "all-reduces verified; ");
#endif
}

}  // namespace

int cmd_check(int argc, char** argv) {
  CLI::App app{"specsim check: rerun a scenario and compare it with a baseline from `specsim run --json`"};
  app.name("specsim check");
  RunArgs args;
  std::string baseline_path, tolerance_text = "3%";
  bool replay = false, allow_different = false;
  int iters = 50, warmup = 10;
  add_run_flags(app, args);
  std::string gate_text = "tok_per_s";
  bool json_out = false;
  TraceArgs files;
  app.add_option("--gate", gate_text,
                 "what may fail the check: tok_per_s (default), cycle_us (cycle and step time) or phases (every "
                 "phase time); the others are shown, not gated");
  app.add_flag("--json", json_out, "print the rows and the verdict as one JSON object (for CI)");
  app.add_option("--accept-from", files.accept_from,
                 "SGLang server log: its mean logged accept len is the rerun's accept len");
  app.add_option("--baseline", baseline_path, "baseline JSON written by `specsim run --json`")->required();
  app.add_option("--tolerance", tolerance_text, "allowed slowdown: a fraction (0.03) or a percentage (3%), default 3%");
  app.add_flag("--replay", replay,
               "verify every all-reduce on the GPU, then replay the plan and compare measured phase times with a "
               "`specsim replay -o` baseline");
  app.add_option("--iters", iters, "--replay: timed graph replays per phase")->check(CLI::Range(1, 100000));
  app.add_option("--warmup", warmup, "--replay: untimed replays first")->check(CLI::Range(0, 100000));
  app.add_flag("--allow-different-settings", allow_different,
               "compare even when the rerun's model, hardware or settings differ from the baseline's");
  return guarded(app, argc, argv, [&] {
    const double tol = check::parse_tolerance(tolerance_text);
    const check::Gate gate = check::parse_gate(gate_text);
    apply_measurement_files(files, args);
    const nlohmann::json base = read_json_file(baseline_path);
    check::require_baseline_kind(base, replay, baseline_path);
    if (replay) return check_replay(args, base, baseline_path, tol, allow_different, iters, warmup);
    const check::MeasureFn measure = check::analytic_measure();
    check::validate_report(base, baseline_path);
    const Scenario scenario = resolve_scenario(args);
    check_accept_log_depth(files, scenario);
    const nlohmann::json now = measure(scenario);

    accept_input_differences(check::input_differences(base, now), allow_different);
    const std::string bver = base["specsim_version"].get<std::string>();
    if (bver != kSpecsimVersion) fmt::print("baseline made with specsim {}, rerun with {}\n", bver, kSpecsimVersion);

    auto rows = check::compare_reports(base, now, tol);
    check::apply_gate(rows, gate);
    if (json_out) {
      const nlohmann::json j = check::check_json(rows, gate, tol);
      std::cout << j.dump(2) << "\n";
      return j["verdict"] == "ok" ? kExitOk : kExitRegression;
    }
    return verdict(rows, tol, fmt::format("figures (gate {})", check::gate_name(gate)).c_str(), "");
  });
}

}  // namespace specsim::cli
