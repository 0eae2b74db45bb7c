// What-ifs: phase-scoped all-reduce backends compared with the measured baseline as well as
// their own, and batch sizes that never pass a derived figure off as measured.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "run_json.h"
#include "test_util.h"

using namespace specsim::test;
using nlohmann::json;

namespace {
const json& phase(const json& sc, const std::string& name) {
  for (const auto& p : sc["phases"])
    if (p["name"] == name) return p;
  FAIL("no phase " << name);
  return sc;
}
double per_allreduce_us(const json& p) { return p["allreduce_us"].get<double>() / p["allreduce_count"].get<double>(); }
}  // namespace

TEST_CASE("--allreduce fixed:40@verify changes only the verify; the baseline stays measured") {
  const json all = run_json({"--allreduce", "fixed:40"});
  const json verify_only = run_json({"--allreduce", "fixed:40@verify"});
  const json& sc = verify_only["scenarios"][0];
  CHECK(sc["label"] == "fixed:40@verify");
  CHECK(per_allreduce_us(phase(sc, "verify")) == Approx(40));
  // the other phases keep NCCL as measured: the draft phases and the baseline are the built-in run's
  const json base = run_json({"--allreduce", "nccl"});
  const json& nccl = base["scenarios"][0];
  for (const char* p : {"draft_decode", "draft_extend", "baseline_decode"})
    CHECK(phase(sc, p)["us"].get<double>() == Approx(phase(nccl, p)["us"].get<double>()));
  CHECK(sc["baseline"]["tok_per_s"].get<double>() == Approx(89.5).epsilon(1e-6));
  // unscoped, the baseline got 40 us all-reduces too: its own baseline is not the measured one
  const json& every = all["scenarios"][0];
  CHECK(per_allreduce_us(phase(every, "baseline_decode")) == Approx(40));
  CHECK(every["baseline"]["tok_per_s"].get<double>() < 89.0);
  // both speedups are given, and the reference is the measured baseline
  CHECK(all["reference_baseline"]["kind"] == "measured");
  CHECK(all["reference_baseline"]["tok_per_s"].get<double>() == Approx(89.5).epsilon(1e-6));
  CHECK(every["spec"]["speedup_vs_reference_baseline"].get<double>() ==
        Approx(every["spec"]["tok_per_s"].get<double>() / 89.5).epsilon(1e-6));
  CHECK(every["spec"]["speedup_vs_reference_baseline"].get<double>() < every["spec"]["speedup"].get<double>());
}

TEST_CASE("the custom kernel's speedup is printed against the measured baseline too, labelled") {
  const CliResult r = run_specsim({});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("x1.01 against its own baseline (109.3 tok/s); x1.23 against the measured baseline, NCCL (89.5 "
                   "tok/s)") != std::string::npos);
  CHECK(r.out.find("speedup against the measured baseline, NCCL (89.5 tok/s): nccl 0.60 custom 1.23") !=
        std::string::npos);
  const json j = run_json({"--allreduce", "custom@verify,draft_extend"});
  const json& sc = j["scenarios"][0];
  CHECK(sc["label"] == "custom@verify,draft_extend");
  CHECK(sc["baseline"]["tok_per_s"].get<double>() == Approx(89.5).epsilon(1e-6));
  CHECK(per_allreduce_us(phase(sc, "verify")) < 20);  // the kernel, not the anchored 200 us NCCL
}

TEST_CASE("bad phase scopes are refused on --allreduce") {
  for (const auto& bad : {"fixed:40@", "fixed:40@prefill", "custom@verify,"}) {
    const CliResult r = run_specsim({"--allreduce", bad});
    INFO(bad << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("(--allreduce)") != std::string::npos);
  }
}

TEST_CASE("at another batch size the measured baseline is named as measured at bs 1, the rest as derived") {
  const CliResult r = run_specsim({"--batch-size", "8"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("baseline 89.5 tok/s measured at bs 1") != std::string::npos);
  CHECK(r.out.find("carried from bs 1 to bs 8 as a per-forward constant") != std::string::npos);
  CHECK(r.out.find("carried from bs 1 to bs 8 as a per-call term") != std::string::npos);
  CHECK(r.out.find("the bs 8 baseline is derived, not measured") != std::string::npos);
  CHECK(r.out.find("against the NCCL baseline at these settings") != std::string::npos);
  CHECK(r.out.find("measured baseline, NCCL") == std::string::npos);
  const json j = run_json({"--batch-size", "8"});
  CHECK(j["reference_baseline"]["kind"] == "modelled");
  for (const auto& a : j["settings"]["anchors"]) CHECK(a["taken_at"]["batch_size"] == 1);
}
