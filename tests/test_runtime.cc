// The serving runtime's own work (models/runtime/): loading, pricing per phase, and how it adds
// to the forwards.
#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "cost/runtime_cost.h"
#include "evaluate/evaluate_scenario.h"
#include "scenario/resolve.h"
#include "test_util.h"
#include "util/error.h"

using namespace specsim;

namespace {

RuntimeTerm term(const char* name, RuntimeTerm::Section sec, PhaseKind phase, double us, bool host,
                 bool graphed = false, int kernels = 0) {
  RuntimeTerm t;
  t.name = name, t.section = sec, t.phase = phase, t.value_us = us, t.host = host, t.graphed = graphed;
  t.kernels = kernels;
  return t;
}

// A profile whose per-op bases equal the box's, so every scale factor is 1 and the sums are by hand.
RuntimeProfile unit_profile(const Hardware& hw) {
  using S = RuntimeTerm::Section;
  RuntimeProfile p;
  p.name = "test";
  p.overlap_plain_decode = true;
  p.host_op_us = hw.gpu.host_launch_us;
  p.graphed_kernel_us = hw.gpu.kernel_min_us + hw.gpu.kernel_switch_us;
  p.eager_kernel_gpu_us = 2.0;
  p.reference_mem_bw_gbps = hw.gpu.mem_bw_gbps;
  RuntimeTerm sched = term("scheduler_host_us", S::Cycle, PhaseKind::Verify, 100, true);
  sched.cycle_phase = true;
  p.terms.push_back(sched);
  RuntimeTerm meta = term("meta_host_us", S::DraftStep, PhaseKind::DraftDecode, 10, true);
  meta.times = RuntimeTerm::Times::DraftForwards;
  p.terms.push_back(meta);
  p.terms.push_back(term("select_us", S::DraftStep, PhaseKind::DraftDecode, 3, false, true, 2));
  RuntimeTerm tree = term("select_tree_us", S::DraftStep, PhaseKind::DraftDecode, 4, false, true, 3);
  tree.times = RuntimeTerm::Times::DraftForwards, tree.when = RuntimeTerm::When::Tree;
  p.terms.push_back(tree);
  RuntimeTerm probs = term("probs_us_per_token", S::DraftStep, PhaseKind::DraftDecode, 0.5, false, true);
  probs.per = RuntimeTerm::Per::Token, probs.vocab_basis = 1000;
  p.terms.push_back(probs);
  p.terms.push_back(term("verify_prepare_host_us", S::Cycle, PhaseKind::Verify, 50, true));
  p.terms.push_back(term("verify_prepare_gpu_us", S::Cycle, PhaseKind::Verify, 20, false, false, 5));
  RuntimeTerm acc = term("accept_host_us_per_accepted_token", S::Cycle, PhaseKind::Verify, 2, true);
  acc.per = RuntimeTerm::Per::AcceptedToken;
  p.terms.push_back(acc);
  RuntimeTerm launch = term("extend_graph_launch_us", S::Cycle, PhaseKind::DraftExtend, 1000, true);
  launch.counted_by_forward = true;  // must not count
  p.terms.push_back(launch);
  RuntimeTerm sampling = term("sampling_extra_host_us", S::Cycle, PhaseKind::Verify, 1000, true);
  sampling.when = RuntimeTerm::When::Sampling;  // greedy: must not count
  p.terms.push_back(sampling);
  p.terms.push_back(term("extend_prepare_host_us", S::Cycle, PhaseKind::DraftExtend, 30, true));
  p.terms.push_back(term("decode_prepare_host_us", S::PlainStep, PhaseKind::BaselineDecode, 40, true));
  p.terms.push_back(term("decode_sample_gpu_us", S::PlainStep, PhaseKind::BaselineDecode, 4, false, false, 2));
  return p;
}

const PhaseRuntime& at(const RuntimeCost& c, PhaseKind k) { return c.phase[static_cast<int>(k)]; }

}  // namespace

TEST_CASE("runtime terms are priced per forward of each phase, by hand") {
  const Hardware hw = load_hardware("h200:nvswitch", 8);
  RunSpec run;
  run.num_steps = 3, run.topk = 2, run.num_draft_tokens = 6, run.batch_size = 2;
  const RuntimeCost c = runtime_cost(unit_profile(hw), run, hw, 4000, 2000);
  // draft_decode: 2 forwards. host 10 x 2 forwards; graphed 3 x 3 steps + 0.5 x 3 steps x (2 x 2
  // tokens) x 2000/1000 + the tree's 4 x 2 forwards (topk 2) = 9 + 12 + 8 = 29. Per forward: 10 and 14.5.
  CHECK(at(c, PhaseKind::DraftDecode).host_us == Approx(10));
  CHECK(at(c, PhaseKind::DraftDecode).gpu_graphed_us == Approx(14.5));
  CHECK(at(c, PhaseKind::DraftDecode).exposed_us(500) == Approx(24.5));
  // the same cycle as a chain (topk 1) has no tree term: 9 + 0.5 x 3 x 2 x 2 = 15, 7.5 per forward.
  RunSpec chain = run;
  chain.topk = 1;
  CHECK(at(runtime_cost(unit_profile(hw), chain, hw, 4000, 2000), PhaseKind::DraftDecode).gpu_graphed_us ==
        Approx(7.5));
  // verify: 100 scheduler + 50 prepare + 2 x bs 2 x (S+1) 4 = 166 host; 20 eager GPU under it.
  CHECK(at(c, PhaseKind::Verify).host_us == Approx(166));
  CHECK(at(c, PhaseKind::Verify).gpu_eager_us == Approx(20));
  CHECK(at(c, PhaseKind::Verify).exposed_us(1000) == Approx(166));
  // draft_extend: 30 host (the graph launch is already in the forward model).
  CHECK(at(c, PhaseKind::DraftExtend).host_us == Approx(30));
  // baseline, overlap scheduler: the 4 us of sampling kernels always, the 40 us host only past the step.
  const PhaseRuntime& b = at(c, PhaseKind::BaselineDecode);
  CHECK(b.overlapped);
  CHECK(b.exposed_us(1000) == Approx(4));
  CHECK(b.exposed_us(25) == Approx(4 + 15));
}

TEST_CASE("an overlapped draft loop shows only the host time past the draft forward, by hand") {
  const Hardware hw = load_hardware("h200:nvswitch", 8);
  RuntimeProfile p = unit_profile(hw);
  p.host_overlaps_forward[static_cast<int>(PhaseKind::DraftDecode)] = true;
  RunSpec run;
  run.num_steps = 3, run.topk = 1, run.num_draft_tokens = 4, run.batch_size = 1;
  // draft_decode, 2 forwards: host 10 x 2 = 20, 10 per forward; graphed 3 x 3 steps + 0.5 x 3
  // steps x 1 token x 2000/1000 = 12, 6 per forward.
  const RuntimeCost c = runtime_cost(p, run, hw, 4000, 2000);
  const PhaseRuntime& d = at(c, PhaseKind::DraftDecode);
  REQUIRE(d.overlapped);
  CHECK(d.host_us == Approx(10));
  CHECK(d.gpu_graphed_us == Approx(6));
  // host longer than the forward (4 us): 6 + (10 - 4) = 12; shorter (500 us): the GPU terms alone.
  CHECK(d.exposed_us(4) == Approx(12));
  CHECK(d.exposed_us(500) == Approx(6));
  // not overlapped, the host adds in full: 10 + 6 whatever the forward.
  const RuntimeCost plain = runtime_cost(unit_profile(hw), run, hw, 4000, 2000);
  const PhaseRuntime& n = at(plain, PhaseKind::DraftDecode);
  CHECK_FALSE(n.overlapped);
  CHECK(n.exposed_us(4) == Approx(16));
  CHECK(n.exposed_us(500) == Approx(16));
  // verify keeps its own setting.
  CHECK_FALSE(at(c, PhaseKind::Verify).overlapped);
}

TEST_CASE("EAGLE-3-only and vocab-map terms count only where the draft has them") {
  using S = RuntimeTerm::Section;
  const Hardware hw = load_hardware("h200:nvswitch", 8);
  RuntimeProfile p = unit_profile(hw);
  RuntimeTerm map = term("map_host_us", S::DraftStep, PhaseKind::DraftDecode, 7, true);
  map.when = RuntimeTerm::When::DraftVocabMap;
  p.terms.push_back(map);
  RuntimeTerm aux = term("aux_host_us", S::Cycle, PhaseKind::DraftExtend, 11, true);
  aux.when = RuntimeTerm::When::Eagle3;
  p.terms.push_back(aux);
  RunSpec run;
  run.num_steps = 3, run.topk = 1, run.num_draft_tokens = 4, run.batch_size = 1;
  run.algo = SpecAlgo::Eagle3;
  // a smaller draft vocab: 10 + 7 x 3 steps / 2 forwards = 20.5 per draft forward; extend 30 + 11.
  RuntimeCost c = runtime_cost(p, run, hw, 4000, 2000);
  CHECK(at(c, PhaseKind::DraftDecode).host_us == Approx(20.5));
  CHECK(at(c, PhaseKind::DraftExtend).host_us == Approx(41));
  // the draft shares the target's vocabulary: no map.
  CHECK(at(runtime_cost(p, run, hw, 4000, 4000), PhaseKind::DraftDecode).host_us == Approx(10));
  // EAGLE (not 3): no aux hidden states.
  run.algo = SpecAlgo::Eagle;
  CHECK(at(runtime_cost(p, run, hw, 4000, 4000), PhaseKind::DraftExtend).host_us == Approx(30));
}

TEST_CASE("FlashInfer-only terms count where the run's attention is SGLang's FlashInfer backend") {
  using S = RuntimeTerm::Section;
  const Hardware hw = load_hardware("h200:nvswitch", 8);
  RuntimeProfile p = unit_profile(hw);
  RuntimeTerm plan = term("plan_host_us", S::DraftStep, PhaseKind::DraftDecode, 40, true);
  plan.times = RuntimeTerm::Times::DraftForwards, plan.when = RuntimeTerm::When::FlashInfer;
  p.terms.push_back(plan);
  RuntimeTerm copy = term("copy_host_us", S::Cycle, PhaseKind::DraftDecode, 30, true);
  copy.when = RuntimeTerm::When::FlashInfer;
  p.terms.push_back(copy);
  RunSpec run;
  run.num_steps = 3, run.topk = 2, run.num_draft_tokens = 6, run.batch_size = 1;
  run.custom_mask_tree = true;  // a tree on FlashInfer, a chain on FA3
  // tree: 10 + 40 a forward + 30 once over 2 forwards = 65 per draft forward
  CHECK(at(runtime_cost(p, run, hw, 4000, 2000), PhaseKind::DraftDecode).host_us == Approx(65));
  // the chain of the same run attends on FA3: neither term
  run.topk = 1;
  CHECK(at(runtime_cost(p, run, hw, 4000, 2000), PhaseKind::DraftDecode).host_us == Approx(10));
  run.custom_mask_chain = true;
  CHECK(at(runtime_cost(p, run, hw, 4000, 2000), PhaseKind::DraftDecode).host_us == Approx(65));
  // one draft step: SGLang makes no draft decode backend, so neither the plans nor the copy
  // happen; they must not move onto verify as the other draft-step terms do
  run.num_steps = 1, run.num_draft_tokens = 2;
  const RuntimeCost one = runtime_cost(p, run, hw, 4000, 2000);
  CHECK(at(one, PhaseKind::Verify).host_us ==
        Approx(at(runtime_cost(unit_profile(hw), run, hw, 4000, 2000), PhaseKind::Verify).host_us));
}

TEST_CASE("SGLang's FlashInfer plans price a Llama tree on Hopper, not its FA3 chain, vLLM or an MLA model") {
  RunArgs a;
  a.model_path = "llama-3.1-8b";
  a.draft_model_path = "llama-3.1-8b/eagle3";
  a.hardware = "h200:nvswitch";
  a.tp_size = 1;
  a.algorithm = "EAGLE3";
  a.num_steps = 5, a.num_draft_tokens = 6;
  a.accept_len = 3.0;
  auto spec_host = [](const RunArgs& r, PhaseKind k) {
    const Scenario s = resolve_scenario(r);
    return at(runtime_for(s, s.run, s.hw), k).host_us;
  };
  RunArgs chain = a, tree = a;
  chain.topk = 1, tree.topk = 3;
  chain.runtime = tree.runtime = "sglang";
  // the tree on FlashInfer (SGLang's default on Hopper) pays the verify's plan, 406.2 + 4.1 a
  // request at bs 1 (the chain on FA3 pays none), the extend's 124.5 + 5.2 and a draft step's 28
  // + the copy's 16 over 4 forwards
  CHECK(spec_host(tree, PhaseKind::Verify) - spec_host(chain, PhaseKind::Verify) == Approx(410.3));
  CHECK(spec_host(tree, PhaseKind::DraftExtend) - spec_host(chain, PhaseKind::DraftExtend) == Approx(129.7));
  CHECK(spec_host(tree, PhaseKind::DraftDecode) - spec_host(chain, PhaseKind::DraftDecode) == Approx(28 + 16.0 / 4));
  // --attention-backend fa3 takes the tree off FlashInfer: no plans
  RunArgs fa3 = tree;
  fa3.attention_backend = "fa3";
  CHECK(spec_host(fa3, PhaseKind::Verify) == Approx(spec_host(chain, PhaseKind::Verify)));
  // vLLM's runtime never prices SGLang's backend
  RunArgs vllm = tree;
  vllm.runtime = "vllm";
  const Scenario on_vllm = resolve_scenario(vllm);
  REQUIRE(on_vllm.runtime);
  for (const RuntimeTerm& t : on_vllm.runtime->terms) CHECK(t.when != RuntimeTerm::When::FlashInfer);
  CHECK_FALSE(on_vllm.run.verify_custom_mask());
  // an MLA model's tree runs FA3 on Hopper: no FlashInfer MHA plans
  RunArgs mla;
  mla.model_path = "deepseek-v3";
  mla.hardware = "h200:nvswitch";
  mla.tp_size = 8;
  mla.topk = 2, mla.num_steps = 3, mla.num_draft_tokens = 6;
  mla.accept_len = 2.0;
  mla.runtime = "sglang";
  CHECK_FALSE(resolve_scenario(mla).run.verify_custom_mask());
}

TEST_CASE("a per-request term counts once per request of the batch, and loads from its suffix") {
  using S = RuntimeTerm::Section;
  const Hardware hw = load_hardware("h200:nvswitch", 8);
  RuntimeProfile p = unit_profile(hw);
  RuntimeTerm plan = term("plan_host_us_per_request", S::Cycle, PhaseKind::DraftExtend, 5, true);
  plan.per = RuntimeTerm::Per::Request;
  p.terms.push_back(plan);
  RunSpec run;
  run.num_steps = 3, run.topk = 2, run.num_draft_tokens = 6, run.batch_size = 4;
  // draft_extend: 30 + 5 x 4 requests (not x topk, not x tokens)
  CHECK(at(runtime_cost(p, run, hw, 4000, 2000), PhaseKind::DraftExtend).host_us == Approx(50));
  // the shipped SGLang profile names its FlashInfer plans this way
  const RuntimeProfile sglang = load_runtime_profile("sglang");
  bool found = false;
  for (const RuntimeTerm& t : sglang.terms)
    if (t.name == "verify_flashinfer_plan_host_us_per_request")
      found = t.per == RuntimeTerm::Per::Request && t.when == RuntimeTerm::When::FlashInfer;
  CHECK(found);
}

TEST_CASE("with one draft step the draft-step terms move onto verify") {
  const Hardware hw = load_hardware("h200:nvswitch", 8);
  RunSpec run;
  run.num_steps = 1, run.topk = 1, run.num_draft_tokens = 2, run.batch_size = 1;
  const RuntimeCost c = runtime_cost(unit_profile(hw), run, hw, 4000, 2000);
  CHECK(at(c, PhaseKind::DraftDecode).host_us == 0);
  // 100 + 50 + 2 x 1 x 2 accepted = 154 host; draft_forwards = 0 so no metadata term.
  CHECK(at(c, PhaseKind::Verify).host_us == Approx(154));
  // graphed: 3 x 1 step + 0.5 x 1 x 1 token x 2 = 4
  CHECK(at(c, PhaseKind::Verify).gpu_graphed_us == Approx(4));
}

TEST_CASE("host terms scale with the box's host launch cost, kernel terms with its kernel floor") {
  Hardware hw = load_hardware("h200:nvswitch", 8);
  RuntimeProfile p = unit_profile(hw);
  hw.gpu.host_launch_us *= 2;  // a host twice as slow
  RunSpec run;
  run.num_steps = 3, run.topk = 2, run.num_draft_tokens = 6, run.batch_size = 2;
  const RuntimeCost c = runtime_cost(p, run, hw, 4000, 2000);
  CHECK(at(c, PhaseKind::Verify).host_us == Approx(2 * 166));
  CHECK(at(c, PhaseKind::Verify).gpu_eager_us == Approx(20));
  p.host_scale = 0.5;
  CHECK(at(runtime_cost(p, run, hw, 4000, 2000), PhaseKind::Verify).host_us == Approx(166));
}

TEST_CASE("the runtime's work adds to each phase and the cycle") {
  RunArgs none;  // no measurements, so no anchor absorbs part of the runtime's work
  none.model_path = "deepseek-v3";
  none.hardware = "h200:nvswitch";
  none.tp_size = 8;
  none.runtime = "none";
  none.accept_len = 2.0;
  RunArgs sg = none;
  sg.runtime = "sglang";
  // SGLang's default for an MLA model on Hopper is FA3, priced by its measured call; FlashInfer's
  // MLA backend keeps the profile's terms, as the runtime-less run: only the runtime's work differs
  sg.attention_backend = "flashinfer";
  const Scenario s0 = resolve_scenario(none);
  const Scenario s1 = resolve_scenario(sg);
  REQUIRE(s1.runtime);
  CHECK_FALSE(s0.runtime);
  const ScenarioResult r0 = run_scenario(s0);
  const ScenarioResult r1 = run_scenario(s1);
  const CycleResult& a = r0.results.front();
  const CycleResult& b = r1.results.front();
  double added = 0;
  for (const auto& p : b.phases) {
    CHECK(p.us == Approx(p.gemm_us + p.attention_us + p.allreduce_us + p.allgather_us + p.other_us + p.launch_us +
                         p.overhead_us + p.spec_overhead_us));
    if (p.kind != PhaseKind::BaselineDecode) added += p.count * p.spec_overhead_us;
    CHECK(p.spec_overhead_us > 0);
  }
  for (const auto& p : a.phases) CHECK(p.spec_overhead_us == 0);
  // SGLang spec v1: ~1 ms of host work per cycle on the critical path.
  CHECK(added > 700);
  CHECK(added < 1500);
  CHECK(b.cycle_us == Approx(a.cycle_us + added));
}

TEST_CASE("a bad runtime profile is one error naming file:field") {
  const std::string dir = test::fresh_dir();
  auto j = nlohmann::json::parse(test::slurp(test::models_path("runtime/sglang.json")));
  j["per_cycle"]["scheduler_host_us"]["value"] = -5;
  test::write_text(dir + "/bad.json", j.dump());
  try {
    load_runtime_profile(dir + "/bad.json");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.where().find("per_cycle.scheduler_host_us.value") != std::string::npos);
  }
  // the shipped profile with one edit, written to dir/name: refused
  auto refused = [&](const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json e = nlohmann::json::parse(test::slurp(test::models_path("runtime/sglang.json")));
    edit(e["per_cycle"]);
    test::write_text(dir + "/" + name, e.dump());
    CHECK_THROWS_AS(load_runtime_profile(dir + "/" + name), InputError);
  };
  refused("nosource.json", [](nlohmann::json& c) { c["scheduler_host_us"].erase("source"); });
  refused("kind.json", [](nlohmann::json& c) { c["scheduler_host_us"]["kind"] = "cpu"; });
  // a name whose suffix says no count, and a `when` the loader does not know
  refused("suffix.json", [](nlohmann::json& c) { c["scheduler_host_us_per_batch"] = c["scheduler_host_us"]; });
  refused("when.json", [](nlohmann::json& c) { c["verify_flashinfer_plan_host_us"]["when"] = "flashinfer_mla"; });

  const auto cli = test::run_specsim({"--runtime", dir + "/bad.json"});
  CHECK(cli.exit_code == 2);
  CHECK(cli.out.empty());
  CHECK(cli.err.rfind("error: ", 0) == 0);
  CHECK(cli.err.find("scheduler_host_us") != std::string::npos);
  CHECK(test::run_specsim({"--runtime", "tgi"}).exit_code == 2);
}

TEST_CASE("both shipped runtime profiles load") {
  CHECK(load_runtime_profile("sglang").terms.size() > 20);
  const RuntimeProfile v = load_runtime_profile("vllm");
  CHECK_FALSE(v.overlap_plain_decode);
  CHECK(load_runtime_profile("sglang").overlap_plain_decode);
  // vLLM's draft loop has no sync between its forwards; SGLang's phases sit behind syncs.
  CHECK(v.host_overlaps_forward[static_cast<int>(PhaseKind::DraftDecode)]);
  CHECK_FALSE(v.host_overlaps_forward[static_cast<int>(PhaseKind::Verify)]);
  for (bool on : load_runtime_profile("sglang").host_overlaps_forward) CHECK_FALSE(on);
}

TEST_CASE("an earlier vLLM release's profile is the current one with its own fitted host terms") {
  const RuntimeProfile now = load_runtime_profile("vllm"), old = load_runtime_profile("vllm-0.10");
  CHECK(now.name == "vllm");
  CHECK(old.name == "vllm");  // vLLM's defaults and kernel names apply to both
  CHECK(old.file == "models/runtime/vllm-0.10.json");
  CHECK(now.applies_to.find("0.11.x") != std::string::npos);
  CHECK(old.applies_to.find("0.8.5-0.10.x") != std::string::npos);
  REQUIRE(now.terms.size() == old.terms.size());
  int differ = 0;
  for (std::size_t i = 0; i < now.terms.size(); ++i) {
    INFO(now.terms[i].name);
    REQUIRE(now.terms[i].name == old.terms[i].name);
    if (now.terms[i].value_us == old.terms[i].value_us) continue;
    ++differ;
    if (now.terms[i].name == "draft_step_forward_launch_host_us") {
      CHECK(old.terms[i].value_us == 853);
      CHECK(old.terms[i].fitted);
      CHECK_FALSE(now.terms[i].fitted);  // an assumption on v0.11's graphed draft head, not a fit
    } else {
      CHECK(now.terms[i].name == "cycle_residual_host_us");
      CHECK(old.terms[i].value_us == 1071);
      CHECK(now.terms[i].fitted);
      CHECK(now.terms[i].source.find("angelslim-readme-vllm-0-11") != std::string::npos);
    }
  }
  CHECK(differ == 2);
  const auto text = test::run_specsim({"--runtime", "vllm-0.10", "--allreduce", "nccl"});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("runtime:  vllm (its own work per phase in runtime_us; models/runtime/vllm-0.10.json)") !=
        std::string::npos);
  // a base profile's term the replacement does not name, and a base with a base: refused
  const std::string dir = test::fresh_dir();
  auto derived = nlohmann::json::parse(test::slurp(test::models_path("runtime/vllm-0.10.json")));
  derived["replace"]["per_cycle"]["no_such_term_us"] = derived["replace"]["per_cycle"]["cycle_residual_host_us"];
  test::write_text(dir + "/typo.json", derived.dump());
  const auto typo = test::run_specsim({"--runtime", dir + "/typo.json"});
  CHECK(typo.exit_code == 2);
  CHECK(typo.err.find("'no_such_term_us' is not a term of vllm's per_cycle") != std::string::npos);
  derived = nlohmann::json::parse(test::slurp(test::models_path("runtime/vllm-0.10.json")));
  derived["base"] = "vllm-0.10";
  test::write_text(dir + "/chain.json", derived.dump());
  CHECK(test::run_specsim({"--runtime", dir + "/chain.json"}).err.find("cannot name a base of its own") !=
        std::string::npos);
  // a key a profile on a base would silently inherit is refused
  derived = nlohmann::json::parse(test::slurp(test::models_path("runtime/vllm-0.10.json")));
  derived["assumptions"] = nlohmann::json::object();
  test::write_text(dir + "/extra.json", derived.dump());
  CHECK(test::run_specsim({"--runtime", dir + "/extra.json"}).err.find("'assumptions' would be ignored") !=
        std::string::npos);
  // a profile file of vLLM's gets vLLM's defaults, as its name does
  const std::vector<std::string> l8 = {"--model-path", "llama-3.1-8b", "--hardware", "h100", "--accept-len", "2",
                                       "--json",       "--runtime"};
  auto with_runtime = [&](const std::string& rt) {
    auto args = l8;
    args.push_back(rt);
    return test::run_specsim(args);
  };
  const auto by_path = with_runtime(test::models_path("runtime/vllm-0.10.json")), by_name = with_runtime("vllm-0.10");
  REQUIRE(by_path.exit_code == 0);
  REQUIRE(by_name.exit_code == 0);
  const auto sp = nlohmann::json::parse(by_path.out)["settings"], sn = nlohmann::json::parse(by_name.out)["settings"];
  CHECK(sp.at("cuda_graph_max_bs") == sn.at("cuda_graph_max_bs"));
  CHECK(sn.at("cuda_graph_max_bs") == 512);  // vLLM's capture limit in a forward's tokens, not SGLang's 160
  CHECK(nlohmann::json::parse(by_path.out)["notes"].dump().find("--gpu-memory-utilization 0.9") != std::string::npos);
  CHECK(sn.at("runtime_profile") == "models/runtime/vllm-0.10.json");
  // check sees a change of profile as a change of input
  const std::string base = dir + "/base.json";
  test::write_text(base, test::run_specsim({"--runtime", "vllm", "--json"}).out);
  const auto checked = test::run_specsim({"check", "--baseline", base, "--runtime", "vllm-0.10"});
  CHECK(checked.out.find("settings/runtime_profile") != std::string::npos);
  // validate runs a case on its release's profile
  const auto v = test::run_specsim({"validate", "--json"});
  REQUIRE(v.exit_code == 0);
  const nlohmann::json cases = nlohmann::json::parse(v.out)["cases"];  // a copy: the parsed document is a temporary
  int on_profile = 0;
  for (const auto& c : cases) {
    const std::string id = c["id"], cmd = c["command"].is_string() ? c["command"].get<std::string>() : "";
    if (id.rfind("vllm-issue20780", 0) == 0) {
      CHECK(cmd.find("--runtime vllm-0.10") != std::string::npos);
      ++on_profile;
    }
    if (id.rfind("angelslim-readme", 0) == 0) {
      CHECK(cmd.find("--runtime vllm ") != std::string::npos);
      ++on_profile;
    }
  }
  CHECK(on_profile == 24);  // the twelve rows of each source
}

TEST_CASE("a run says which releases its runtime profile describes, in text and JSON") {
  const std::string vllm_range = load_runtime_profile("vllm").applies_to;
  CHECK(vllm_range.find("0.11.x") != std::string::npos);
  const auto text = test::run_specsim({"--runtime", "vllm", "--allreduce", "nccl"});
  INFO(text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("describes: " + vllm_range) != std::string::npos);
  const auto j = test::run_specsim({"--json"});
  REQUIRE(j.exit_code == 0);
  const auto settings = nlohmann::json::parse(j.out).at("settings");
  CHECK(settings.at("runtime_applies_to") == load_runtime_profile("sglang").applies_to);
  const auto none = test::run_specsim({"--runtime", "none", "--json"});
  REQUIRE(none.exit_code == 0);
  CHECK(nlohmann::json::parse(none.out).at("settings").at("runtime_applies_to").is_null());
}

TEST_CASE("a bad host_overlaps_forward is one error naming file:field") {
  const std::string dir = test::fresh_dir();
  auto j = nlohmann::json::parse(test::slurp(test::models_path("runtime/vllm.json")));
  j["host_overlaps_forward"]["baseline_decode"] = true;
  test::write_text(dir + "/base.json", j.dump());
  try {
    load_runtime_profile(dir + "/base.json");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.where().find("host_overlaps_forward.baseline_decode") != std::string::npos);
  }
  j = nlohmann::json::parse(test::slurp(test::models_path("runtime/vllm.json")));
  j["host_overlaps_forward"]["draft_decode"] = "yes";
  test::write_text(dir + "/str.json", j.dump());
  CHECK_THROWS_AS(load_runtime_profile(dir + "/str.json"), InputError);
  j = nlohmann::json::parse(test::slurp(test::models_path("runtime/vllm.json")));
  j["host_overlaps_forward"].erase("source");
  test::write_text(dir + "/nosource.json", j.dump());
  CHECK_THROWS_AS(load_runtime_profile(dir + "/nosource.json"), InputError);
  j = nlohmann::json::parse(test::slurp(test::models_path("runtime/vllm.json")));
  j["per_draft_step"]["draft_step_vocab_map_host_us"]["when"] = "eagle4";
  test::write_text(dir + "/when.json", j.dump());
  CHECK_THROWS_AS(load_runtime_profile(dir + "/when.json"), InputError);
}

TEST_CASE("EAGLE and NEXTN on DeepSeek pick its NextN layer; EAGLE3 keeps the EAGLE-3 draft") {
  RunArgs a;
  a.model_path = "deepseek-v3";
  a.tp_size = 8;
  a.hardware = "h200:nvswitch";
  a.accept_len = 2.0;
  for (const char* algo : {"EAGLE", "NEXTN", "nextn"}) {
    a.algorithm = algo;
    const Scenario s = resolve_scenario(a);
    REQUIRE(s.draft);
    CHECK(s.draft->is_nextn());
  }
  a.algorithm = "EAGLE3";
  CHECK_FALSE(resolve_scenario(a).draft->is_nextn());
}

TEST_CASE("every shipped runtime profile loads and prices a run and a sweep") {
  int profiles = 0;
  for (const auto& entry : std::filesystem::directory_iterator(models_path("runtime"))) {
    const std::string name = entry.path().stem().string();
    if (entry.path().extension() != ".json" || name == "kernel-names") continue;  // kernel names: no profile
    ++profiles;
    INFO(name);
    CHECK_NOTHROW(load_runtime_profile(name));
    const test::CliResult run = test::run_specsim({"run", "--runtime", name, "--accept-len", "2", "--json"});
    CHECK(run.exit_code == 0);
    const test::CliResult sweep =
        test::run_specsim({"sweep", "--runtime", name, "--accept-len", "2", "--batch-size", "1,4"});
    CHECK(sweep.exit_code == 0);
  }
  CHECK(profiles >= 4);  // sglang, sglang-spec-v2, vllm, vllm-0.10
}
