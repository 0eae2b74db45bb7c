// `specsim tune` end to end: only settings SGLang runs, ranking order, refusals, the acceptance
// sources (per-depth file, SGLang log, bench results, scenario file), outputs, and the break-even
// batch size moving the right way with the all-reduce's cost.
#include <catch2/catch.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_util.h"

using namespace specsim::test;
using nlohmann::json;

namespace {

const std::vector<std::string> kBox = {"--model-path", "llama-3.1-8b", "--hardware", "h200:nvswitch", "--tp-size", "8"};

std::string acceptance_file(const std::string& dir, const std::string& body) {
  const std::string p = dir + "/acc.json";
  write_text(p, body);
  return p;
}

json tune_json(std::vector<std::string> args) {
  args.insert(args.begin(), "tune");
  args.insert(args.end(), kBox.begin(), kBox.end());
  args.push_back("--json");
  const CliResult r = run_specsim(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

// SGLang's rule, written out again here so the test does not trust the code under test.
bool sglang_runs(int s, int k, int n) { return k == 1 ? n == s + 1 : n >= 2 && n <= k * s + 1; }

}  // namespace

TEST_CASE("tune: without acceptance data it refuses in one line naming the flags, writing nothing") {
  const std::string dir = fresh_dir();
  const auto r = run_specsim({"tune", "--csv", dir + "/out.csv"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("--accept-from") != std::string::npos);
  CHECK(r.err.find("--acceptance") != std::string::npos);
  CHECK(r.err.find("--scenario") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_FALSE(exists(dir + "/out.csv"));
  // Searched flags are not taken.
  CHECK(run_specsim({"tune", "--speculative-eagle-topk", "2"}).exit_code == 2);
}

TEST_CASE("tune: every SGLang setting in 1-8 x 1-8 x <= 64 is ranked, none other, best tok/s first") {
  const std::string dir = fresh_dir();
  const json j = tune_json({"--acceptance", acceptance_file(dir, R"({"depth_rates": [0.8, 0.75, 0.7]})"),
                            "--batch-size", "1,16", "--top", "0", "--allreduce", "nccl"});
  std::size_t expected = 0;
  for (int s = 1; s <= 8; ++s)
    for (int k = 1; k <= 8; ++k)
      for (int n = 1; n <= 64; ++n) expected += sglang_runs(s, k, n);
  CHECK(j["search"]["draft_settings"] == expected);
  REQUIRE(j["batches"].size() == 2);
  for (const auto& b : j["batches"]) {
    CHECK(b["ranked"].size() == expected);
    double prev = 1e300;
    int rank = 0;
    for (const auto& x : b["ranked"]) {
      CHECK(x["rank"] == ++rank);
      CHECK(sglang_runs(x["steps"], x["topk"], x["draft_tokens"]));
      CHECK(x["tok_s"].get<double>() <= prev);
      prev = x["tok_s"];
      CHECK(x["speedup"].get<double>() == Approx(x["tok_s"].get<double>() / b["plain"][0]["tok_s"].get<double>()));
      CHECK(x["accept_len"].get<double>() <= x["steps"].get<int>() + 1 + 1e-9);
    }
    CHECK(b["pays"] == (b["ranked"][0]["tok_s"].get<double>() > b["plain_best_tok_s"].get<double>()));
  }
  // --top keeps the head of the same order.
  const json t =
      tune_json({"--acceptance", dir + "/acc.json", "--batch-size", "1,16", "--top", "3", "--allreduce", "nccl"});
  REQUIRE(t["batches"][1]["ranked"].size() == 3);
  CHECK(t["batches"][1]["ranked"][2] == j["batches"][1]["ranked"][2]);
  CHECK(t["elapsed_s"].get<double>() < 2.0);
}

TEST_CASE("tune: with wide top-k coverage a tree wins, with none a chain does") {
  const std::string dir = fresh_dir();
  // Coverage that grows fast with k: the draft's second and third choices often hold the token.
  const json wide = tune_json(
      {"--acceptance", acceptance_file(dir, R"({"depth_rates": [0.55], "topk_coverage": [[0.55, 0.85, 0.95]]})"),
       "--batch-size", "1", "--allreduce", "nccl"});
  CHECK(wide["batches"][0]["ranked"][0]["topk"].get<int>() > 1);
  // No coverage beyond k 1: extra branches are verified for nothing.
  const json none =
      tune_json({"--acceptance", acceptance_file(dir, R"({"depth_rates": [0.55], "topk_coverage": [[0.55, 0.55]]})"),
                 "--batch-size", "1", "--allreduce", "nccl"});
  CHECK(none["batches"][0]["ranked"][0]["topk"] == 1);
}

TEST_CASE("tune: speculation stops paying at a smaller batch size when the all-reduce is cheaper") {
  const std::string dir = fresh_dir();
  const std::string acc = acceptance_file(dir, R"({"depth_rates": [0.6]})");
  auto stop = [&](const std::string& allreduce) {
    const json j = tune_json({"--acceptance", acc, "--allreduce", allreduce, "--batch-size", "1,4,16,64,128,256"});
    return j["speculation_stops_paying_at_batch_size"];
  };
  const json cheap = stop("fixed:5"), dear = stop("fixed:100");
  REQUIRE_FALSE(cheap.is_null());
  CHECK((dear.is_null() || dear.get<int>() > cheap.get<int>()));
  // And the text says so.
  const auto r = run_specsim({"tune", "--acceptance", acc, "--allreduce", "fixed:5", "--batch-size", "1,256",
                              "--model-path", "llama-3.1-8b", "--hardware", "h200:nvswitch", "--tp-size", "8"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("speculation stops paying at batch size 256") != std::string::npos);
  CHECK(r.out.find("run without it") != std::string::npos);
}

TEST_CASE("tune: acceptance fitted from an SGLang log, bench results and a scenario file") {
  const std::string dir = fresh_dir();
  const std::string log = dir + "/sglang.log";
  write_text(log,
             "[2025-06-01 10:00:00 TP0] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', "
             "tp_size=8, speculative_algorithm='EAGLE3', speculative_num_steps=3, speculative_eagle_topk=1, "
             "speculative_num_draft_tokens=4)\n"
             "[2025-06-01 10:00:05 TP0] Decode batch, #running-req: 1, #token: 186, token usage: 0.00, accept len: "
             "2.60, cuda graph: True, gen throughput (token/s): 178.86, #queue-req: 0\n"
             "[2025-06-01 10:00:06 TP0] Decode batch, #running-req: 1, #token: 286, token usage: 0.00, accept len: "
             "2.80, cuda graph: True, gen throughput (token/s): 180.10, #queue-req: 0\n");
  const json j = tune_json({"--accept-from", log, "--batch-size", "1"});
  const auto& fit = j["acceptance"]["fit"];
  REQUIRE(fit["points"].size() == 1);
  CHECK(fit["points"][0]["measured_accept_len"].get<double>() == Approx(2.7));
  CHECK(fit["points"][0]["model_accept_len"].get<double>() == Approx(2.7).margin(1e-6));
  CHECK(fit["beta_fitted"] == false);
  // The chain it was measured at gets the measured accept len back.
  bool saw = false;
  const json all = tune_json({"--accept-from", log, "--batch-size", "1", "--top", "0", "--allreduce", "nccl"});
  for (const auto& x : all["batches"][0]["ranked"])
    if (x["steps"] == 3 && x["topk"] == 1) {
      saw = true;
      CHECK(x["accept_len"].get<double>() == Approx(2.7).margin(1e-6));
    }
  CHECK(saw);

  // A second log at a tree setting: both settings fitted, the coverage exponent with them.
  const std::string log2 = dir + "/sglang-tree.log";
  write_text(log2,
             "[2025-06-02 10:00:00 TP0] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', "
             "tp_size=8, speculative_algorithm='EAGLE3', speculative_num_steps=5, speculative_eagle_topk=4, "
             "speculative_num_draft_tokens=16)\n"
             "[2025-06-02 10:00:05 TP0] Decode batch, #running-req: 1, #token: 186, token usage: 0.00, accept len: "
             "3.90, cuda graph: True, gen throughput (token/s): 190.00, #queue-req: 0\n");
  const json two = tune_json({"--accept-from", log, "--accept-from", log2, "--batch-size", "1"});
  CHECK(two["acceptance"]["fit"]["points"].size() == 2);
  CHECK(two["acceptance"]["fit"]["beta_fitted"] == true);

  // Bench results at two settings, one a tree: the coverage exponent is fitted too.
  const std::string bench = dir + "/bench.jsonl";
  write_text(bench, R"({"batch_size": 1, "steps": 3, "topk": 1, "num_draft_tokens": 4, "acc_length": 2.7})"
                    "\n"
                    R"({"batch_size": 1, "steps": 5, "topk": 4, "num_draft_tokens": 16, "acc_length": 3.9})"
                    "\n");
  const json b = tune_json({"--accept-from", bench, "--batch-size", "1"});
  CHECK(b["acceptance"]["fit"]["beta_fitted"] == true);
  CHECK(b["acceptance"]["fit"]["points"].size() == 2);
  CHECK(b["acceptance"]["fit"]["rms_error"].get<double>() < 0.05);

  // A scenario file: its accept len at its setting.
  const std::string scen = dir + "/s.json";
  const auto saved = run_specsim({"run", "--model-path", "llama-3.1-8b", "--hardware", "h200:nvswitch", "--tp-size",
                                  "8", "--accept-len", "2.5", "--save-scenario", scen});
  REQUIRE(saved.exit_code == 0);
  const auto r = run_specsim({"tune", "--scenario", scen, "--batch-size", "1", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json s = json::parse(r.out);
  CHECK(s["model"] == "llama-3.1-8b");
  CHECK(s["acceptance"]["fit"]["points"][0]["measured_accept_len"].get<double>() == Approx(2.5));
}

TEST_CASE("tune: the scenario `specsim diagnose` writes from a log is tuned from its accept len") {
  const std::string dir = fresh_dir();
  const std::string log = traces_path("sglang-logs/sglang-eagle3-llama3.1-8b-h100-synthetic-from-real-format.log");
  const auto d = run_specsim({"diagnose", log, "--hardware", "h100-sxm:nvswitch", "-o", dir + "/s.yaml"});
  INFO(d.err);
  REQUIRE(d.exit_code == 0);
  const auto r = run_specsim({"tune", "--scenario", dir + "/s.yaml", "--batch-size", "1,32", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["model"] == "llama-3.1-8b");
  CHECK(j["tp_size"] == 1);
  CHECK(j["search"]["allreduce"] == json::array({"nccl"}));  // tp 1: no all-reduce to choose
  const auto& p = j["acceptance"]["fit"]["points"][0];
  CHECK(p["steps"] == 5);
  CHECK(p["topk"] == 8);
  CHECK(p["draft_tokens"] == 32);
  // The log's mean accept len, as the scenario carries it.
  std::stringstream text(slurp(log));
  double sum = 0;
  int n = 0;
  for (std::string line; std::getline(text, line);)
    if (const auto at = line.find("accept len: "); at != std::string::npos) sum += std::stod(line.substr(at + 12)), ++n;
  REQUIRE(n > 0);
  CHECK(p["measured_accept_len"].get<double>() == Approx(sum / n).epsilon(1e-6));
  CHECK(p["model_accept_len"].get<double>() == Approx(p["measured_accept_len"].get<double>()).margin(1e-6));
}

TEST_CASE("tune --accept-len / --accept-rate: one number at the deployment's setting, the coverage assumed") {
  // Taken at the deployment's setting: Llama-3.1-8B's SGLang default (steps 5, topk 4, 8 draft tokens).
  const json j = tune_json({"--accept-len", "2.6", "--batch-size", "1,8"});
  const auto& acc = j["acceptance"];
  REQUIRE(acc["fit"]["points"].size() == 1);
  const auto& p = acc["fit"]["points"][0];
  CHECK(p["measured_accept_len"].get<double>() == Approx(2.6));
  CHECK(p["model_accept_len"].get<double>() == Approx(2.6).margin(1e-6));
  CHECK(acc["from"].get<std::string>().find("the deployment's setting: accept len 2.600 at steps") == 0);
  CHECK(acc["note"].get<std::string>().find("assumed coverage shape") != std::string::npos);
  CHECK(acc["warnings"].empty());
  CHECK(j["batches"].size() == 2);
  // The same number given as the per-token rate that reaches it ranks the same settings.
  const json k = tune_json({"--accept-rate", "0.6", "--batch-size", "1"});
  REQUIRE(k["acceptance"]["fit"]["points"].size() == 1);
  CHECK(k["acceptance"]["fit"]["points"][0]["measured_accept_len"].get<double>() > 1.0);
  // With another source, or out of range: one line naming the flag.
  const std::string dir = fresh_dir();
  const auto both = run_specsim({"tune", "--accept-len", "2", "--acceptance", acceptance_file(dir, "{}")});
  CHECK(both.exit_code == 2);
  CHECK(both.err.find("(--accept-len)") != std::string::npos);
  CHECK(run_specsim({"tune", "--accept-len", "0.5"}).exit_code == 2);
}

TEST_CASE("tune --accept-len with the settings it was measured at reads it there, not at the defaults") {
  // before: refused as "states the settings of an --accept-from log", so a chain's 3.0 was fitted as
  // the default tree's (steps 5, topk 4, 8 draft tokens)
  const json j = tune_json(
      {"--accept-len", "3.0", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--batch-size", "1"});
  const auto& p = j["acceptance"]["fit"]["points"];
  REQUIRE(p.size() == 1);
  CHECK(p[0]["steps"] == 3);
  CHECK(p[0]["topk"] == 1);
  CHECK(p[0]["draft_tokens"] == 4);
  CHECK(p[0]["measured_accept_len"].get<double>() == Approx(3.0));
  CHECK(j["acceptance"]["from"].get<std::string>().find("the stated setting (--speculative-num-steps 3") == 0);
  // without them: read at the deployment's default setting
  const json d = tune_json({"--accept-len", "3.0", "--batch-size", "1"});
  CHECK(d["acceptance"]["fit"]["points"][0]["steps"] == 5);
  // more steps than the model's default (5): the accept len is checked against the stated steps
  const json deep = tune_json(
      {"--accept-len", "6.5", "--speculative-num-steps", "7", "--speculative-eagle-topk", "1", "--batch-size", "1"});
  CHECK(deep["acceptance"]["fit"]["points"][0]["steps"] == 7);
  CHECK(deep["acceptance"]["fit"]["points"][0]["measured_accept_len"].get<double>() == Approx(6.5));
  // an accept len above the stated steps + 1, and a scenario file beside the stated settings: refused
  const auto over = run_specsim({"tune", "--accept-len", "3.5", "--speculative-num-steps", "2",
                                 "--speculative-eagle-topk", "1", "--model-path", "llama-3.1-8b"});
  CHECK(over.exit_code == 2);
  CHECK(over.err.find("--accept-len") != std::string::npos);
  const std::string dir = fresh_dir(), file = dir + "/s.json";
  REQUIRE(
      run_specsim({"run", "--model-path", "llama-3.1-8b", "--accept-len", "2.5", "--save-scenario", file}).exit_code ==
      0);
  const auto beside = run_specsim({"tune", "--scenario", file, "--accept-len", "3", "--speculative-num-steps", "3",
                                   "--speculative-eagle-topk", "1"});
  CHECK(beside.exit_code == 2);
  CHECK(beside.err.find("holds its own: give one") != std::string::npos);
}

TEST_CASE("tune: acceptance measured on another model than the target is warned about") {
  const std::string dir = fresh_dir();
  const std::string log = dir + "/deepseek.log";
  write_text(log,
             "[2025-06-01 10:00:00 TP0] server_args=ServerArgs(model_path='deepseek-ai/DeepSeek-V3', tp_size=8, "
             "speculative_algorithm='EAGLE3', speculative_num_steps=3, speculative_eagle_topk=1, "
             "speculative_num_draft_tokens=4)\n"
             "[2025-06-01 10:00:05 TP0] Decode batch, #running-req: 1, #token: 186, token usage: 0.00, accept len: "
             "2.60, cuda graph: True, gen throughput (token/s): 78.86, #queue-req: 0\n");
  const json j = tune_json({"--accept-from", log, "--batch-size", "1"});  // a Llama-3.1-8B deployment
  REQUIRE(j["acceptance"]["warnings"].size() == 1);
  const std::string w = j["acceptance"]["warnings"][0];
  CHECK(w.find("deepseek-ai/DeepSeek-V3") != std::string::npos);
  CHECK(w.find("the target here is llama-3.1-8b") != std::string::npos);
  std::vector<std::string> text = {"tune", "--accept-from", log, "--batch-size", "1"};
  text.insert(text.end(), kBox.begin(), kBox.end());
  const auto t = run_specsim(text);
  CHECK(t.exit_code == 0);
  CHECK(t.out.find("warning: the acceptance of " + log + " was measured on deepseek-ai/DeepSeek-V3") !=
        std::string::npos);
  // On its own target: no warning.
  std::vector<std::string> same = {
      "tune",          "--accept-from", log, "--batch-size", "1", "--model-path", "deepseek-v3", "--hardware",
      "h200:nvswitch", "--tp-size",     "8", "--json"};
  const auto s = run_specsim(same);
  INFO(s.err);
  REQUIRE(s.exit_code == 0);
  CHECK(json::parse(s.out)["acceptance"]["warnings"].empty());
}

TEST_CASE("tune: a published-acceptance file of another model than the target is warned about, once") {
  const std::string qwen = traces_path("published-acceptance/ik-llama-pr2156-qwen3.6-mtp.json");
  const std::string dsv3 = traces_path("published-acceptance/sglang-pr3582-deepseek-v3-nextn.json");
  // the default target (deepseek-v3), as `tune --accept-from FILE --batch-size 1` runs it
  const auto t = run_specsim({"tune", "--accept-from", qwen, "--batch-size", "1"});
  INFO(t.err);
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("warning: the acceptance of " + qwen +
                   " was measured on Qwen3.6-35B-A3B, and the target here is deepseek-v3") != std::string::npos);
  // one warning for the file, not one per setting it lists
  const json j = tune_json({"--accept-from", qwen, "--batch-size", "1"});
  REQUIRE(j["acceptance"]["warnings"].size() == 1);
  CHECK(j["acceptance"]["warnings"][0].get<std::string>().find("the target here is llama-3.1-8b") != std::string::npos);
  // DeepSeek-V3's own file on DeepSeek-V3: no warning; on Llama: one
  const auto same = run_specsim({"tune", "--accept-from", dsv3, "--batch-size", "1", "--model-path", "deepseek-v3",
                                 "--hardware", "h200:nvswitch", "--tp-size", "8", "--json"});
  INFO(same.err);
  REQUIRE(same.exit_code == 0);
  CHECK(json::parse(same.out)["acceptance"]["warnings"].empty());
  const json other = tune_json({"--accept-from", dsv3, "--batch-size", "1"});
  REQUIRE(other["acceptance"]["warnings"].size() == 1);
  CHECK(other["acceptance"]["warnings"][0].get<std::string>().find("measured on DeepSeek-V3") != std::string::npos);
}

TEST_CASE("tune: bad inputs exit 2 with one line naming the file or flag") {
  const std::string dir = fresh_dir();
  auto refused = [&](const std::vector<std::string>& args, const std::string& what) {
    std::vector<std::string> a = {"tune"};
    a.insert(a.end(), args.begin(), args.end());
    const auto r = run_specsim(a);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(what) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  };
  refused({"--acceptance", acceptance_file(dir, R"({"depth_rates": [0.8], "topk_coverage": [[0.8, 0.7]]})")},
          "topk_coverage[0][1]");
  refused({"--acceptance", acceptance_file(dir, R"({"depth_rates": [1.5]})")}, "depth_rates[0]");
  refused({"--acceptance", dir + "/missing.json"}, "missing.json");
  refused({"--acceptance", acceptance_file(dir, R"({"depth_rates": [0.8]})"), "--accept-from", dir + "/acc.json"},
          "not both");
  refused({"--acceptance", dir + "/acc.json", "--batch-size", "0"}, "--batch-size");
  refused({"--acceptance", dir + "/acc.json", "--batch-size", "1..300"}, "at most 256");
  refused({"--acceptance", dir + "/acc.json", "--allreduce", "bogus!"}, "--allreduce");
  refused({"--acceptance", dir + "/acc.json", "--speculative-algorithm", "NONE"}, "--speculative-algorithm");
  write_text(dir + "/bad.csv", "steps,topk,num_draft_tokens,accept_len\n3,1,5,2.5\n");
  refused({"--accept-from", dir + "/bad.csv"}, "forces num-draft-tokens");
}

TEST_CASE("tune: --csv rows match the JSON; --plot draws a picture") {
  const std::string dir = fresh_dir();
  const std::string acc = acceptance_file(dir, R"({"depth_rates": [0.7]})");
  const json j = tune_json({"--acceptance", acc, "--batch-size", "1,8", "--top", "2", "--csv", dir + "/t.csv"});
  std::stringstream csv(slurp(dir + "/t.csv"));
  std::string header, line;
  std::getline(csv, header);
  CHECK(header == "batch_size,rank,steps,topk,draft_tokens,allreduce,accept_len,cycle_us,tok_s,speedup,plain_tok_s");
  std::vector<std::string> rows;
  while (std::getline(csv, line)) rows.push_back(line);
  REQUIRE(rows.size() == 4);
  const auto& top = j["batches"][1]["ranked"][0];
  const std::string prefix =
      "8,1," + std::to_string(top["steps"].get<int>()) + "," + std::to_string(top["topk"].get<int>()) + "," +
      std::to_string(top["draft_tokens"].get<int>()) + "," + top["allreduce"].get<std::string>() + ",";
  CHECK(rows[2].rfind(prefix, 0) == 0);

  if (!have_gnuplot()) {
    std::cout << "SKIP: gnuplot is not installed (apt-get install gnuplot-nox); tune plot test not run\n";
    return;
  }
  const auto r = run_specsim({"tune", "--acceptance", acc, "--batch-size", "1,8,64", "--plot", dir + "/t.png",
                              "--plot-script", dir + "/t.gp"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(slurp(dir + "/t.png").rfind("\x89PNG", 0) == 0);
  CHECK(slurp(dir + "/t.gp").find("plain decoding") != std::string::npos);
  // A plot that cannot be drawn writes neither it nor the CSV.
  const auto bad = run_specsim({"tune", "--acceptance", acc, "--plot", dir + "/t.gif", "--csv", dir + "/u.csv"});
  CHECK(bad.exit_code == 2);
  CHECK_FALSE(exists(dir + "/u.csv"));
}

TEST_CASE("tune: a batch size `specsim run` refuses for memory is skipped with the reason, never ranked") {
  const std::string dir = fresh_dir();
  const std::string acc = acceptance_file(dir, R"({"depth_rates": [0.7]})");
  // the built-in scenario (DeepSeek-V3 on 8x RTX PRO 6000): run refuses batch 16
  const auto run16 = run_specsim({"--batch-size", "16"});
  REQUIRE(run16.exit_code == 2);
  const std::string reason = run16.err.substr(7, run16.err.size() - 8);  // without "error: " and the newline
  CHECK(run_specsim({"--batch-size", "1"}).exit_code == 0);

  const auto text = run_specsim({"tune", "--acceptance", acc, "--batch-size", "1,16", "--top", "1"});
  INFO(text.err);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("batch size 16: skipped, `specsim run` refuses it: " + reason + "\n") != std::string::npos);
  CHECK(text.out.find("batch sizes skipped (they do not fit GPU memory; see below): 16") != std::string::npos);
  CHECK(text.out.find("batch size 1: plain decoding") != std::string::npos);

  const auto js = run_specsim({"tune", "--acceptance", acc, "--batch-size", "1,16", "--json"});
  REQUIRE(js.exit_code == 0);
  const json j = json::parse(js.out);
  REQUIRE(j["batches"].size() == 2);
  CHECK(j["batches"][0]["skipped_reason"].is_null());
  CHECK(j["batches"][0]["settings_ranked"].get<int>() > 0);
  CHECK(j["batches"][1]["batch_size"] == 16);
  CHECK(j["batches"][1]["skipped_reason"] == reason);
  CHECK(j["batches"][1]["settings_ranked"] == 0);
  CHECK(j["batches"][1]["ranked"].empty());
  CHECK(j["batches"][1]["plain"].empty());

  // its CSV holds no row of the skipped batch size
  REQUIRE(run_specsim({"tune", "--acceptance", acc, "--batch-size", "1,16", "--csv", dir + "/t.csv"}).exit_code == 0);
  const std::string csv = slurp(dir + "/t.csv");
  CHECK(csv.find("\n1,1,") != std::string::npos);
  CHECK(csv.find("\n16,") == std::string::npos);

  // nothing fits: run's own refusal, exit 2
  const auto none = run_specsim({"tune", "--acceptance", acc, "--batch-size", "16,32"});
  CHECK(none.exit_code == 2);
  CHECK(none.err == run16.err);
}
