// Real launch commands as users paste them: the program found past docker, env and the
// interpreter's options; other engines and scripts refused by name; the environment classed by
// models/stacks/environment.csv; SGLang 0.4.x spellings; --enable-ep-moe and
// --disable-overlap-schedule priced as SGLang runs them; GPU names as users type them.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "pasted_command.h"
#include "scenario/stack_flag_table.h"
#include "test_util.h"

using namespace specsim;
using namespace specsim::test;
using nlohmann::json;

namespace {

const json& phase(const json& scenario, const std::string& name) {
  for (const auto& p : scenario["phases"])
    if (p["name"] == name) return p;
  FAIL("no phase " << name);
  return scenario;
}

}  // namespace

TEST_CASE("the program is found past docker, env, nohup and the interpreter's options") {
  const std::vector<std::string> launch = {
      "python3", "-u", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct"};
  std::vector<std::string> docker = {"docker",     "run", "--gpus",      "all",
                                     "--shm-size", "32g", "-e",          "NCCL_ALGO=Ring",
                                     "--ipc=host", "-p",  "30000:30000", "lmsysorg/sglang:v0.5.2-cu126"};
  docker.insert(docker.end(), launch.begin(), launch.end());
  docker.insert(docker.end(), {"--tp", "8"});
  const CliResult r = paste_run(docker);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["pasted_command"]["stack"] == "SGLang v0.5.2");
  CHECK(j["settings"]["tp_size"] == 8);
  CHECK(has_note(j, "the docker run wrapper's options and image are not read"));
  // docker's -e reaches the run as the server's environment: NCCL_ALGO is specsim's --nccl-algo
  const auto detail = [](const std::vector<std::string>& cmd) {
    const CliResult r = paste_run(cmd, {"--allreduce", "nccl"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out)["scenarios"][0]["detail"].get<std::string>();
  };
  const std::vector<std::string> tp4 = {"python3", "-m", "sglang.launch_server", "--model-path", "llama-3.3-70b",
                                        "--tp",    "4"};
  auto in_docker = [&](const std::string& env) {
    std::vector<std::string> c = {"docker", "run", "--gpus", "all", "-e", env, "lmsysorg/sglang:latest"};
    c.insert(c.end(), tp4.begin(), tp4.end());
    return c;
  };
  CHECK(detail(in_docker("NCCL_ALGO=Tree")).rfind("tree/", 0) == 0);
  CHECK(detail(in_docker("NCCL_ALGO=Ring")).rfind("ring/", 0) == 0);
  // an option's value or an untagged image named like a stack is not the program
  std::vector<std::string> named = {"docker", "run", "--name", "sglang", "-v", "/data/vllm:/vllm", "lmsysorg/sglang"};
  named.insert(named.end(), launch.begin(), launch.end());
  const CliResult n = paste_run(named);
  INFO(n.err);
  CHECK(n.exit_code == 0);
  // vLLM's image runs `vllm serve` itself: the flags after the image are its
  const CliResult v =
      paste_run({"docker", "run", "--runtime", "nvidia", "--gpus", "all", "--env", "HUGGING_FACE_HUB_TOKEN=x", "-p",
                 "8000:8000", "--ipc=host", "vllm/vllm-openai:latest", "--model", "meta-llama/Llama-3.1-8B-Instruct"});
  INFO(v.err);
  REQUIRE(v.exit_code == 0);
  CHECK(json::parse(v.out)["pasted_command"]["stack"] == "vLLM v0.11.0");
  // another image's own entrypoint cannot be seen; a variable set outside the container is not its
  const CliResult bare = paste_run({"docker", "run", "--rm", "-it", "lmsysorg/sglang"});
  CHECK(bare.exit_code == 2);
  CHECK(bare.err.find("runs the image's own entrypoint") != std::string::npos);
  std::vector<std::string> outside = {"SGLANG_ENABLE_SPEC_V2=1", "docker", "run", "img"};
  outside.insert(outside.end(), launch.begin(), launch.end());
  const CliResult o = paste_run(outside);
  INFO(o.err);
  REQUIRE(o.exit_code == 0);
  CHECK(has_note(json::parse(o.out), "SGLANG_ENABLE_SPEC_V2 is set outside the container: not read"));
  // a shell pipe or redirection ends the command, said
  std::vector<std::string> piped = {"nohup", "env", "HF_TOKEN=x"};
  piped.insert(piped.end(), launch.begin(), launch.end());
  piped.insert(piped.end(), {"2>&1", "|", "tee", "server.log"});
  const CliResult p = paste_run(piped);
  INFO(p.err);
  REQUIRE(p.exit_code == 0);
  CHECK(has_note(json::parse(p.out), "the command ends at '2>&1' (a shell operator)"));
}

TEST_CASE("vLLM's positional model only after serve; env and time options are theirs") {
  const CliResult stray = paste_run(
      {"python", "-m", "vllm.entrypoints.openai.api_server", "--model", "meta-llama/Llama-3.1-8B-Instruct", "stray"});
  CHECK(stray.exit_code == 2);
  CHECK(stray.err.find("'stray' is not a flag of vLLM v0.11.0 (a value without its flag?)") != std::string::npos);
  const CliResult cli =
      paste_run({"python", "-m", "vllm.entrypoints.cli.main", "serve", "meta-llama/Llama-3.1-8B-Instruct"});
  INFO(cli.err);
  CHECK(cli.exit_code == 0);
  const CliResult env = paste_run({"env", "-i", "HF_TOKEN=1", "time", "-p", "python3", "-m", "sglang.launch_server",
                                   "--model-path", "meta-llama/Llama-3.1-8B-Instruct"});
  INFO(env.err);
  CHECK(env.exit_code == 0);
}

TEST_CASE("another engine, a JAX port or a benchmark script is refused by name, not read as SGLang") {
  const std::vector<std::vector<std::string>> others = {
      {"python3", "-m", "sgl_jax.launch_server", "--model-path", "Qwen/Qwen3-32B", "--tp-size", "4"},
      {"trtllm-serve", "meta-llama/Llama-3.1-8B-Instruct", "--tp_size", "1"},
      {"python3", "-m", "mlc_llm", "serve", "dist/x", "--mode", "server"},
      {"python", "bench_eagle3.py", "--model", "Qwen/Qwen3-30B-A3B", "--tp-size", "2"}};
  for (const auto& cmd : others) {
    const CliResult r = paste_run(cmd);
    INFO(cmd[0] << " " << cmd[1] << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK((r.err.find("is not SGLang's or vLLM's") != std::string::npos ||
           r.err.find("is not a server launch") != std::string::npos));
    CHECK(r.err.find("not a flag of SGLang") == std::string::npos);
  }
}

TEST_CASE("environment variables are classed by models/stacks/environment.csv, per value where it matters") {
  CHECK(environment_class("HF_TOKEN", "abc").cls == FlagClass::Ignored);
  CHECK(environment_class("NCCL_P2P_LEVEL", "NVL").cls == FlagClass::Modelled);
  CHECK(environment_class("SGLANG_ENABLE_SPEC_V2", "1").cls == FlagClass::Modelled);  // picks the worker
  CHECK(environment_class("SGLANG_ENABLE_SPEC_V2", "0").cls == FlagClass::Modelled);
  CHECK(environment_class("SGLANG_ENABLE_SPEC_V2", "maybe").cls == FlagClass::Refused);  // EnvBool refuses it
  CHECK(environment_class("SOME_UNKNOWN_KNOB", "1").cls == FlagClass::Refused);
  const std::vector<std::string> launch = {"python3", "-m", "sglang.launch_server", "--model-path",
                                           "meta-llama/Llama-3.1-8B-Instruct"};
  std::vector<std::string> harmless = {"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1", "PYTHONUNBUFFERED=1"};
  harmless.insert(harmless.end(), launch.begin(), launch.end());
  CHECK(paste_run(harmless).exit_code == 0);
  std::vector<std::string> bad = {"SGLANG_ENABLE_SPEC_V2=maybe"};
  bad.insert(bad.end(), launch.begin(), launch.end());
  const CliResult r = paste_run(bad);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("not modelled: SGLANG_ENABLE_SPEC_V2=maybe") != std::string::npos);
}

TEST_CASE("SGLang 0.4.x spellings and switches: --speculative-draft, --enable-ep-moe") {
  const CliResult r = paste_run({"python3", "-m", "sglang.launch_server", "--model", "meta-llama/Llama-3.1-8B-Instruct",
                                 "--speculative-algo", "EAGLE3", "--speculative-draft", "llama-3.1-8b/eagle3"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["settings"]["speculative_algorithm"] == "EAGLE3");
  CHECK(has_note(j, "--speculative-draft read as --speculative-draft-model-path"));
  // ServerArgs.__post_init__: ep_size = tp_size, over a given --ep-size
  const CliResult ep = paste_run({"python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3",
                                  "--enable-ep-moe", "--ep-size", "2", "--tp", "8"});
  INFO(ep.err);
  REQUIRE(ep.exit_code == 0);
  const json e = json::parse(ep.out);
  CHECK(e["settings"]["ep_size"] == 8);
  CHECK(has_note(e, "--enable-ep-moe: experts split over the TP group, --ep-size 8"));
}

TEST_CASE("vLLM's flags before --speculative-config are read as its keys; the switch that changes nothing is ignored") {
  const std::vector<std::string> head = {"python", "-m", "vllm.entrypoints.openai.api_server", "--model",
                                         "meta-llama/Llama-3.1-8B-Instruct"};
  auto with = [&](std::vector<std::string> tail) {
    std::vector<std::string> c = head;
    c.insert(c.end(), tail.begin(), tail.end());
    return paste_run(c, {"--hardware", "h100:nvswitch"});
  };
  const CliResult old = with({"--speculative_model", "yuhuili/EAGLE-LLaMA3.1-Instruct-8B", "--num-speculative-tokens",
                              "4", "--use-v2-block-manager", "--spec-decoding-acceptance-method", "rejection_sampler"});
  INFO(old.err);
  REQUIRE(old.exit_code == 0);
  const json o = json::parse(old.out);
  CHECK(o["settings"]["speculative_algorithm"] == "EAGLE");
  CHECK(o["settings"]["speculative_num_steps"] == 4);
  CHECK(has_note(o, "--speculative_model read as --speculative-config.model"));
  CHECK(has_note(o, "--use-v2-block-manager is ignored"));
  // the same run as v0.11 spells it
  const CliResult now =
      with({"--speculative-config", R"({"model": "yuhuili/EAGLE-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 4})"});
  INFO(now.err);
  REQUIRE(now.exit_code == 0);
  CHECK(json::parse(now.out)["scenarios"][0]["spec"]["cycle_us"].get<double>() ==
        Approx(o["scenarios"][0]["spec"]["cycle_us"].get<double>()));
  // what the older flags change and specsim does not price: refused, naming the method or the key
  const CliResult ngram =
      with({"--speculative-model", "[ngram]", "--num-speculative-tokens", "5", "--ngram-prompt-lookup-max", "4"});
  CHECK(ngram.exit_code == 2);
  CHECK(ngram.err.find("method 'ngram'") != std::string::npos);
  const CliResult by_batch = with({"--speculative-model", "yuhuili/EAGLE-LLaMA3.1-Instruct-8B",
                                   "--num-speculative-tokens", "4", "--speculative-disable-by-batch-size", "4"});
  CHECK(by_batch.exit_code == 2);
  CHECK(by_batch.err.find("key 'disable_by_batch_size' (4)") != std::string::npos);
  const CliResult typical =
      with({"--speculative-model", "yuhuili/EAGLE-LLaMA3.1-Instruct-8B", "--num-speculative-tokens", "4",
            "--spec-decoding-acceptance-method", "typical_acceptance_sampler"});
  CHECK(typical.exit_code == 2);
  CHECK(typical.err.find("acceptance_method") != std::string::npos);
  // v0.11's JSON has no such key: refused there even at the old default
  CHECK(with({"--speculative-config", R"({"model": "yuhuili/EAGLE-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 4, )"
                                      R"("acceptance_method": "rejection_sampler"})"})
            .exit_code == 2);
  const CliResult inline_value = with({"--use-v2-block-manager=true"});
  CHECK(inline_value.exit_code == 2);
  CHECK(inline_value.err.find("takes no value ('true' given)") != std::string::npos);
  // the report lists the flags as pasted, without the key they are read as
  REQUIRE(old.exit_code == 0);
  const std::string rows = o["pasted_command"]["flags"].dump();
  CHECK(rows.find("--speculative_model") != std::string::npos);
  CHECK(rows.find("--speculative_model.") == std::string::npos);
  // v0.11's own key at its default is taken; the unpadded drafting path is not priced
  const std::string eagle = R"({"model": "yuhuili/EAGLE-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 4, )";
  CHECK(with({"--speculative-config", eagle + R"("disable_padded_drafter_batch": false})"}).exit_code == 0);
  const CliResult unpadded = with({"--speculative-config", eagle + R"("disable_padded_drafter_batch": true})"});
  CHECK(unpadded.exit_code == 2);
  CHECK(unpadded.err.find("key 'disable_padded_drafter_batch' (true)") != std::string::npos);
}

TEST_CASE("a refusal of a flag's value names the value: the others are priced") {
  const CliResult r = paste_run({"python3", "-m", "sglang.launch_server", "--model-path",
                                 "meta-llama/Llama-3.1-8B-Instruct", "--attention-backend", "triton"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("not modelled: --attention-backend triton changes") != std::string::npos);
}

TEST_CASE("--disable-overlap-schedule puts plain decode's host work on the step; the speculative cycle is unchanged") {
  const std::vector<std::string> launch = {"python3",
                                           "-m",
                                           "sglang.launch_server",
                                           "--model-path",
                                           "meta-llama/Llama-3.1-8B-Instruct",
                                           "--speculative-algorithm",
                                           "EAGLE3"};
  std::vector<std::string> off = launch;
  off.push_back("--disable-overlap-schedule");
  const CliResult a = paste_run(launch), b = paste_run(off);
  INFO(a.err << b.err);
  REQUIRE(a.exit_code == 0);
  REQUIRE(b.exit_code == 0);
  const json ja = json::parse(a.out)["scenarios"][0], jb = json::parse(b.out)["scenarios"][0];
  const json& base_on = phase(ja, "baseline_decode");
  const json& base_off = phase(jb, "baseline_decode");
  // overlapped, only host time past the GPU step shows (none here); without the overlap all of it
  const double host = base_off["runtime_host_us"].get<double>();
  REQUIRE(host > 100);
  CHECK(base_off["us"].get<double>() == Approx(base_on["us"].get<double>() + host).epsilon(0.01));
  CHECK(jb["spec"]["cycle_us"].get<double>() == Approx(ja["spec"]["cycle_us"].get<double>()));
  CHECK(json::parse(b.out)["settings"]["disable_overlap_schedule"] == true);
  // a saved scenario keeps it
  const std::string dir = fresh_dir(), file = dir + "/s.json";
  std::vector<std::string> save = {"run",           "--accept-len",    "2",  "--hardware",
                                   "h200:nvswitch", "--save-scenario", file, "--"};
  save.insert(save.end(), off.begin(), off.end());
  REQUIRE(run_specsim(save).exit_code == 0);
  const CliResult again = run_specsim({"run", "--json", "--scenario", file});
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  const json jc = json::parse(again.out);
  CHECK(jc["settings"]["disable_overlap_schedule"] == true);
  CHECK(phase(jc["scenarios"][0], "baseline_decode")["us"].get<double>() == Approx(base_off["us"].get<double>()));
}

TEST_CASE("GPU names as users type them: an alias, any case, the GPU alone for one GPU") {
  const CliResult one =
      run_specsim({"run", "--json", "--accept-len", "2", "--hardware", "H100", "--model-path", "llama-3.1-8b"});
  INFO(one.err);
  REQUIRE(one.exit_code == 0);
  const json j = json::parse(one.out);
  CHECK(j["hardware"]["spec"] == "h100-sxm:nvswitch");
  CHECK(has_note(j, "GPU 'h100' read as the zoo's h100-sxm"));
  CHECK(has_note(j, "one GPU and no topology given"));
  // the topology prices the collectives between GPUs: not assumed for several
  const CliResult eight = run_specsim({"run", "--hardware", "h200", "--tp-size", "8", "--model-path", "llama-3.3-70b"});
  CHECK(eight.exit_code == 2);
  CHECK(eight.err.find("'h200' names no topology") != std::string::npos);
  CHECK(eight.err.find("pcie-numa") != std::string::npos);
  const CliResult unknown = run_specsim({"run", "--hardware", "h300:nvswitch"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("unknown GPU 'h300'") != std::string::npos);
}

TEST_CASE("the export variants A800 and H800: the A100's and H100's profiles with their own NVLink, kept by name") {
  const auto tok_s = [](const std::string& gpu) {
    const CliResult r = run_specsim({"run", "--json", "--accept-len", "3", "--hardware", gpu + ":nvswitch",
                                     "--model-path", "llama-3.1-70b", "--tp-size", "8", "--batch-size", "64"});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out);
  };
  const json a100 = tok_s("a100-sxm"), a800 = tok_s("A800"), h100 = tok_s("h100-sxm"), h800 = tok_s("h800");
  CHECK(a800["hardware"]["spec"] == "a800:nvswitch");
  CHECK(a800["hardware"]["gpu"] == "a800");
  CHECK(has_note(a800, "GPU 'a800' read as the zoo's a100-sxm with its own nvlink_bw_gbps"));
  // the link caps the all-reduces' bandwidth: 64 x 4 verify tokens of 8192 are 4 MB an all-reduce
  const auto spec_tok_s = [](const json& j) { return j["scenarios"][0]["spec"]["tok_per_s"].get<double>(); };
  CHECK(spec_tok_s(a800) < 0.98 * spec_tok_s(a100));
  CHECK(spec_tok_s(h800) < 0.98 * spec_tok_s(h100));
  // a saved scenario reads the variant again, not the profile it rests on
  const std::string file = fresh_dir() + "/a800.json";
  REQUIRE(run_specsim({"run", "--accept-len", "3", "--hardware", "a800:nvswitch", "--model-path", "llama-3.1-70b",
                       "--tp-size", "8", "--batch-size", "64", "--save-scenario", file})
              .exit_code == 0);
  const CliResult again = run_specsim({"run", "--json", "--scenario", file});
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  CHECK(spec_tok_s(json::parse(again.out)) == Approx(spec_tok_s(a800)));
}

TEST_CASE("a cycle that rests on host terms fitted to a published run says how much, until a measurement anchors it") {
  const std::vector<std::string> vllm = {
      "vllm", "serve", "openai/gpt-oss-120b", "--speculative-config",
      R"({"method": "eagle3", "model": "nvidia/gpt-oss-120b-Eagle3", "num_speculative_tokens": 3})"};
  // vLLM 0.10's per-draft-step and per-cycle residuals (models/runtime/vllm-0.10.json) are fitted on issue 20780
  const std::vector<std::string> old = {"--hardware", "b200:nvswitch", "--runtime", "vllm-0.10"};
  const CliResult r = paste_run(vllm, old);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json f = json::parse(r.out)["runtime_fitted"];
  CHECK(f["share_of_cycle"].get<double>() > 0.2);
  CHECK(f["terms"].dump().find("draft_step_forward_launch_host_us 853 us") != std::string::npos);
  CHECK(f["sources"].dump().find("vllm-issue-20780") != std::string::npos);
  CHECK(f["caution"].get<std::string>().find("of this cycle is host time of runtime terms fitted") !=
        std::string::npos);
  // the current release's profile (vllm.json) has one small fitted residual: no caution
  const CliResult now = paste_run(vllm, {"--hardware", "b200:nvswitch"});
  REQUIRE(now.exit_code == 0);
  const json n = json::parse(now.out)["runtime_fitted"];
  CHECK(n["terms"].dump().find("cycle_residual_host_us 298 us") != std::string::npos);
  CHECK(n["sources"].dump().find("angelslim-readme-vllm-0-11") != std::string::npos);
  CHECK(n["share_of_cycle"].get<double>() < 0.2);
  CHECK(n["caution"].is_null());
  auto anchored_flags = old;
  anchored_flags.insert(anchored_flags.end(), {"--measured-spec-tok-s", "450"});
  const CliResult anchored = paste_run(vllm, anchored_flags);
  INFO(anchored.err);
  REQUIRE(anchored.exit_code == 0);
  const json a = json::parse(anchored.out)["runtime_fitted"];
  CHECK(a["share_of_cycle"] == 0.0);
  CHECK(a["caution"].is_null());
  // a spec tok/s without its accept len implies the acceptance from the modelled cycle: the fitted
  // terms stay in the cycle, and so does the caution
  std::vector<std::string> implied = {
      "run", "--json", "--hardware", "b200:nvswitch", "--runtime", "vllm-0.10", "--measured-spec-tok-s", "450", "--"};
  implied.insert(implied.end(), vllm.begin(), vllm.end());
  const CliResult i = run_specsim(implied);
  INFO(i.err);
  REQUIRE(i.exit_code == 0);
  CHECK(json::parse(i.out)["runtime_fitted"]["share_of_cycle"].get<double>() > 0.2);
  // SGLang's profile counts its terms: nothing fitted
  const CliResult sglang = paste_run({"python3", "-m", "sglang.launch_server", "--model-path",
                                      "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3"});
  REQUIRE(sglang.exit_code == 0);
  CHECK(json::parse(sglang.out)["runtime_fitted"]["terms"].empty());
}

TEST_CASE("a draft the zoo does not hold: the zoo draft its name names, or a same-architecture model's, said") {
  // a NextN layer pasted under EAGLE3 on DeepSeek-R1: the model's own NextN layer, not "no draft"
  const CliResult r1 =
      paste_run({"python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-R1", "--tp", "8",
                 "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/x/DeepSeek-R1-NextN"});
  INFO(r1.err);
  REQUIRE(r1.exit_code == 0);
  CHECK(has_note(json::parse(r1.out), "the zoo's deepseek-r1/nextn stands in"));
  // a bare folder name on the serving machine naming AngelSlim's draft: the zoo's eagle3-angelslim
  const CliResult r2 =
      paste_run({"python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-30B-A3B",
                 "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "AngelSlim--Qwen3-a3B_eagle3"});
  INFO(r2.err);
  REQUIRE(r2.exit_code == 0);
  const json j2 = json::parse(r2.out);
  CHECK(has_note(j2, "the zoo's qwen3-30b-a3b/eagle3-angelslim, the draft its name names"));
  CHECK(j2.dump().find("qwen3-30b-a3b/eagle3-angelslim") != std::string::npos);
  // Llama-3.3-70B has no zoo draft of its own; Llama-3.1-70B has the same architecture and one
  const CliResult r3 = paste_run({"python3", "-m", "sglang.launch_server", "--model",
                                  "meta-llama/Llama-3.3-70B-Instruct", "--tp", "8", "--speculative-algorithm", "EAGLE3",
                                  "--speculative-draft-model-path", "yuhuili/EAGLE3-LLaMA3.3-Instruct-70B"});
  INFO(r3.err);
  REQUIRE(r3.exit_code == 0);
  CHECK(has_note(json::parse(r3.out),
                 "the zoo's llama-3.1-70b/eagle3 stands in: llama-3.1-70b has the same "
                 "architecture as llama-3.3-70b"));
  // a model of another architecture is no stand-in: Qwen3-8B's draft never serves Llama-3.3-70B
  CHECK(r3.out.find("qwen3") == std::string::npos);
}

TEST_CASE("vLLM: steps without a method or draft on a DeepSeek-V3 target run its own MTP layer, as vLLM does") {
  const CliResult r = paste_run({"vllm", "serve", "deepseek-ai/DeepSeek-R1", "-tp", "8", "--speculative-config",
                                 R"({"num_speculative_tokens": 1})"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["settings"]["speculative_algorithm"] == "NEXTN");
  CHECK(has_note(j, "vLLM runs the target's own MTP layer (method mtp)"));
  // on a target without one vLLM refuses it ("num_speculative_tokens was provided but without
  // speculative model"): the method is asked for
  const CliResult llama = paste_run({"vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-config",
                                     R"({"num_speculative_tokens": 1})"});
  CHECK(llama.exit_code == 2);
  CHECK(llama.err.find("names no method") != std::string::npos);
}

TEST_CASE("vLLM: an MTP method naming the target without num_speculative_tokens drafts its MTP layers") {
  // the draft config vLLM builds for a named MTP model has n_predict = num_nextn_predict_layers
  const CliResult r = paste_run({"vllm", "serve", "deepseek-ai/DeepSeek-V3", "-tp", "8", "--speculative-config",
                                 R"({"method": "deepseek_mtp", "model": "deepseek-ai/DeepSeek-V3"})"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["settings"]["speculative_algorithm"] == "NEXTN");
  CHECK(j["settings"]["speculative_num_steps"] == 1);  // DeepSeek-V3's config.json: 1 MTP layer
  CHECK(has_note(j, "num_nextn_predict_layers (its MTP draft's n_predict)"));
  // no model named (vLLM builds no draft config then and asks for the steps), Kimi-K2's 0 MTP
  // layers, an EAGLE draft's config without n_predict: the steps are asked for
  for (const std::vector<std::string>& cmd :
       {std::vector<std::string>{"vllm", "serve", "deepseek-ai/DeepSeek-V3", "-tp", "8", "--speculative-config",
                                 R"({"method": "deepseek_mtp"})"},
        std::vector<std::string>{"vllm", "serve", "moonshotai/Kimi-K2-Instruct", "-tp", "8", "--speculative-config",
                                 R"({"method": "mtp", "model": "moonshotai/Kimi-K2-Instruct"})"},
        std::vector<std::string>{"vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-config",
                                 R"({"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"})"}}) {
    const CliResult refused = paste_run(cmd);
    INFO(cmd.back());
    CHECK(refused.exit_code == 2);
    CHECK(refused.err.find("needs num_speculative_tokens") != std::string::npos);
  }
}

TEST_CASE("a quantized release of a zoo model is that model with the named weights; a 16-bit --dtype keeps them") {
  const CliResult fp4 = paste_run({"python3", "-m", "sglang.launch_server", "--model-path", "nvidia/DeepSeek-R1-FP4",
                                   "--quantization", "modelopt_fp4", "--tp", "8"},
                                  {"--hardware", "b200:nvswitch"});
  INFO(fp4.err);
  REQUIRE(fp4.exit_code == 0);
  const json j = json::parse(fp4.out);
  CHECK(j["model"]["name"] == "deepseek-r1");
  CHECK(j["settings"]["dtype"] == "nvfp4");
  CHECK(has_note(j, "nvidia/DeepSeek-R1-FP4 -> zoo deepseek-r1 with nvfp4 weights"));
  const CliResult fp8 = paste_run({"vllm", "serve", "RedHatAI/Qwen3-8B-FP8-dynamic", "--dtype", "bfloat16"});
  INFO(fp8.err);
  REQUIRE(fp8.exit_code == 0);
  const json k = json::parse(fp8.out);
  CHECK(k["settings"]["dtype"] == "fp8");
  CHECK(has_note(k, "--dtype bfloat16: the activations' dtype; the release's fp8 weights stay"));
  // a suffix on a name the zoo does not hold is no model
  CHECK(paste_run({"vllm", "serve", "someone/Unknown-7B-FP8"}).exit_code == 2);
}

TEST_CASE("set-up chained before the launch (cd DIR &&, export NAME=VALUE;) is skipped, its exports kept") {
  const CliResult r = paste_run({"cd", "/sgl-workspace", "&&", "export", "NCCL_ALGO=Tree", ";", "python3", "-m",
                                 "sglang.launch_server", "--model-path", "llama-3.3-70b", "--tp", "4"},
                                {"--allreduce", "nccl"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(has_note(j, "'cd ...' before '&&' is set-up"));
  CHECK(j["scenarios"][0]["detail"].get<std::string>().rfind("tree/", 0) == 0);
  // after the launch, && still ends the command
  const CliResult after = paste_run({"python3", "-m", "sglang.launch_server", "--model-path",
                                     "meta-llama/Llama-3.1-8B-Instruct", "&&", "echo", "done"});
  REQUIRE(after.exit_code == 0);
  CHECK(has_note(json::parse(after.out), "the command ends at '&&'"));
}
