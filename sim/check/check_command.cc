#include "check/check_command.h"

#include <fmt/format.h>

#include "check/check_replay.h"
#include "check/junit.h"
#include "replay_report/replay_report.h"
#include "report/report.h"
#include "scenario/load_scenario.h"
#include "scenario/measurement_files.h"
#include "scenario/scenario_file.h"
#include "util/error.h"
#include "util/json_io.h"
#include "util/output_files.h"

namespace specsim::check {

namespace {

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string list;
  for (const auto& d : v) list += (list.empty() ? "" : sep) + d;
  return list;
}

// Inputs that differ from those of a baseline that holds no scenario (a replay report, or one
// written before baselines carried theirs): refused, or (with --allow-different-settings) noted.
void accept_input_differences(const std::vector<std::string>& diffs, bool allow_different, std::ostream& err) {
  if (diffs.empty()) return;
  const std::string list = joined(diffs, "; ");
  if (!allow_different)
    throw InputError("the rerun's inputs differ from the baseline's, so they are not compared: " + list +
                         " (this baseline holds no scenario to rerun: give the flags it was made with, remake it "
                         "with `specsim run FLAGS --json > FILE` so it carries them, or --allow-different-settings)",
                     "--baseline");
  err << "note: comparing different inputs (--allow-different-settings): " << list << "\n";
}

// Where the baseline said its accept len came from, as RunArgs::accept_source (the report's
// label reversed): a rerun of the scenario it carries gives the same label, not "from the scenario
// file", so only a real change of the accept len shows as a difference.
std::optional<std::string> accept_source_of(const nlohmann::json& base) {
  const nlohmann::json& src = base["settings"].value("accept_len_source", nlohmann::json(nullptr));
  const std::string label = src.is_string() ? src.get<std::string>() : "";
  const std::string from = "from the ", rate_of = "chain formula with the accept rate of the ";
  if (label.rfind(from, 0) == 0) return label.substr(from.size());
  if (label.rfind(rate_of, 0) == 0) {  // "... of the SOURCE RATE over N steps"
    const std::size_t over = label.rfind(" over ");
    const std::size_t rate = over == std::string::npos ? over : label.rfind(' ', over - 1);
    if (rate != std::string::npos && rate > rate_of.size()) return label.substr(rate_of.size(), rate - rate_of.size());
  }
  return std::nullopt;
}

// The scenario a baseline carries, with the flags given beside it on top.
Scenario carried_scenario(const nlohmann::json& base, const std::string& path, RunArgs& args) {
  const ScenarioFile file{path + ": scenario_file", base["scenario_file"]};
  if (!args.accept_len && !args.accept_rate) {  // the accept len is the baseline's: labelled as it was
    args_from_scenario_file(file.doc, args, file.path);
    args.accept_source = accept_source_of(base);
  }
  return load_scenario(file, args);
}

// --junit, once the rows are known (its path was checked before anything ran).
void write_junit(const CheckRequest& q, const std::vector<CheckRow>& rows, Gate gate, double tol,
                 const CheckContext& c) {
  if (!q.junit.empty()) write_outputs_atomic({{OutputFile{q.junit, "--junit"}, check_junit(rows, gate, tol, c)}});
}

// `--replay` (docs/README-check-replay.md): first every distinct all-reduce of the plan through
// every backend the scenario names, checked against a CPU reference (a wrong or unwritten element
// fails the check); then the plan replayed on GPU 0 by the executor of `specsim replay`, and its
// measured phase `us` compared with a replay baseline (`specsim replay -o`).
bool check_replay(const RunArgs& args, const CheckRequest& q, const nlohmann::json& base, double tol,
                  const ReplayGpu* gpu, std::ostream& out, std::ostream& err) {
  validate_replay_report(base, q.baseline);
  if (!gpu)
    throw InputError("no GPU: this specsim was built without CUDA (rebuild with nvcc, cuBLAS and NCCL)", "--replay");
  if (gpu->device_count() < 1) throw InputError("no GPU: no CUDA device is visible", "--replay");
  const Scenario s = resolve_scenario(args);
  const ScenarioResult r = run_scenario(s);
  auto check_inputs = [&](const nlohmann::json& now) {
    accept_input_differences(replay_input_differences(base, now), q.allow_different, err);
  };
  {  // the scenario before any GPU time is spent (the device is compared once measured)
    nlohmann::json pre = replay_json(s, r, ReplayMeasurement{});
    pre["device"] = base.value("device", nlohmann::json(nullptr));
    if (!q.allow_different) check_inputs(pre);
  }

  std::vector<AllReduceChoice> backends;
  for (const auto& c : r.results) {
    if (c.refused.empty())
      backends.push_back(c.backend);
    else
      out << fmt::format("allreduce verify: {}: not verified: the engine refuses it here: {}\n", c.backend.label(),
                         c.refused);
  }
  size_t failed = 0;
  for (const auto& v : gpu->verify_allreduces(distinct_allreduces(r.plan), r.plan.tp, backends)) {
    out << verify_line(v) << "\n";
    failed += v.failed();
  }
  if (failed) {
    out << fmt::format("check: FAILED: {} all-reduce verification(s) wrong or erroring; timing skipped\n", failed);
    return true;
  }

  const nlohmann::json now = replay_json(s, r, gpu->replay_phases(r.plan, q.iters, q.warmup));
  check_inputs(now);
  out << fmt::format("comparing measured phase us (GPU replay on {}) with the replay baseline {}\n",
                     now.value("device", "?"), q.baseline);
  const auto rows = compare_replay_reports(base, now, tol);
  CheckContext c;
  c.baseline_file = q.baseline, c.baseline_version = base.value("specsim_version", "");
  c.changes = q.changes, c.differences = replay_input_differences(base, now);
  write_junit(q, rows, Gate::Phases, tol, c);
  return write_verdict(rows, tol, "phases", "all-reduces verified; ", out);
}

}  // namespace

bool write_verdict(const std::vector<CheckRow>& rows, double tol, const std::string& what, const std::string& ok_prefix,
                   std::ostream& out) {
  size_t bad = 0;
  for (const auto& r : rows) bad += r.regressed;
  out << check_table(rows);
  if (bad) {
    out << fmt::format("check: REGRESSED: {} of {} {} worse than the baseline by more than {:g}%\n", bad, rows.size(),
                       what, 100 * tol);
    return true;
  }
  out << fmt::format("check: ok: {}{} {} within {:g}% of the baseline\n", ok_prefix, rows.size(), what, 100 * tol);
  return false;
}

bool run_check(RunArgs& args, const CheckRequest& q, const ReplayGpu* gpu, std::ostream& out, std::ostream& err) {
  const double tol = parse_tolerance(q.tolerance);
  const Gate gate = parse_gate(q.gate);
  check_outputs({{q.junit, "--junit"}}, {q.baseline, q.accept_from});
  MeasurementFiles files;
  files.accept_from = q.accept_from;
  const Measurements m = read_measurement_files(files, args);
  const nlohmann::json base = read_json_file(q.baseline);
  require_baseline_kind(base, q.replay, q.baseline);
  if (q.replay) return check_replay(args, q, base, tol, gpu, out, err);
  const MeasureFn measure = analytic_measure();
  validate_report(base, q.baseline);
  // A baseline from `specsim run --json` carries its scenario: rerun as made, the flags given
  // beside it applied on top (the change under test). An older one is rerun from the flags.
  CheckContext c;
  c.baseline_file = q.baseline;
  c.baseline_version = base["specsim_version"].get<std::string>();
  c.carried_scenario = base.contains("scenario_file");
  c.changes = q.changes;
  const Scenario scenario = c.carried_scenario ? carried_scenario(base, q.baseline, args) : resolve_scenario(args);
  m.check(scenario);
  const nlohmann::json now = measure(scenario);
  c.differences = input_differences(base, now);
  if (!c.carried_scenario) accept_input_differences(c.differences, q.allow_different, err);

  auto rows = compare_reports(base, now, tol);
  apply_gate(rows, gate);
  write_junit(q, rows, gate, tol, c);
  if (q.json) {
    const nlohmann::json j = check_json(rows, gate, tol, c);
    out << dump_json(j) << "\n";
    return j["verdict"] != "ok";
  }
  if (c.baseline_version != kSpecsimVersion)
    out << fmt::format("baseline made with specsim {}, rerun with {}\n", c.baseline_version, kSpecsimVersion);
  if (c.carried_scenario)
    out << fmt::format(
        "rerunning the scenario of {}{}\n", q.baseline,
        c.changes.empty() ? ", as it was made" : " with the change under test: " + joined(c.changes, " "));
  if (c.carried_scenario && !c.differences.empty())
    out << "inputs that differ from the baseline's: " << joined(c.differences, "; ") << "\n";
  return write_verdict(rows, tol, fmt::format("figures (gate {})", gate_name(gate)), "", out);
}

}  // namespace specsim::check
