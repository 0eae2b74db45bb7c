// Traces a profiler user can overlay: op slices carry the kernel names of the runtime's
// torch.profiler trace (models/runtime/kernel-names.json), every backend is drawn, a collective's
// ranks are joined by a flow, and the size stays bounded.
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "ingest/torch_trace.h"
#include "test_util.h"
#include "timeline/trace_writer.h"

using namespace specsim;
using namespace specsim::test;
using nlohmann::json;

namespace {

const std::string kTorch = traces_path("torch-trace-verify-synthetic.json");

// The ingest class a predicted op kind must land in when its kernel name is read back.
std::string ingest_class_of(const std::string& op_kind, const std::string& allreduce) {
  if (op_kind == "gemm" || op_kind == "moe_gemm") return "gemm";
  if (op_kind == "attention") return "attention";
  if (op_kind == "all_gather") return "nccl_other";
  if (op_kind == "all_reduce") return allreduce == "custom" ? "custom_allreduce" : "nccl_allreduce";
  return "other";  // norms and elementwise ops
}

json trace_of(const std::vector<std::string>& extra) {
  const std::string dir = fresh_dir();
  std::vector<std::string> args{"run", "--trace", dir + "/t.json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_specsim(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(slurp(dir + "/t.json"));
}

}  // namespace

TEST_CASE("overlay: ingest --torch-trace of the sample and the predicted trace share kernel names") {
  const auto ing = run_specsim({"ingest", "--torch-trace", kTorch, "--json"});
  INFO(ing.err);
  REQUIRE(ing.exit_code == 0);
  const json real = json::parse(ing.out);
  REQUIRE(real.contains("kernel_names"));
  std::map<std::string, std::string> real_kind;  // kernel name -> ingest class
  for (const auto& k : real["kernel_names"]) real_kind[k["name"].get<std::string>()] = k["kind"].get<std::string>();
  REQUIRE(real_kind.size() >= 5);

  // The sample is an MLA model's eager verify with NCCL: the built-in DeepSeek-V3 scenario.
  const json pred = trace_of({"--allreduce", "nccl"});
  std::set<std::string> shared_kinds;
  std::set<std::string> predicted;
  for (const auto& e : pred["traceEvents"]) {
    if (e["ph"] != "X" || !e.contains("args") || !e["args"].contains("op")) continue;
    const std::string name = e["name"], kind = e["cat"];
    predicted.insert(name);
    // Read back by the ingest classifier, a predicted kernel lands in its op's class.
    const std::string want = ingest_class_of(kind, "nccl");
    const std::string got(ingest::kernel_kind_name(ingest::classify_kernel(name)));
    INFO(name << " (" << kind << ")");
    CHECK(got == want);
    if (auto it = real_kind.find(name); it != real_kind.end()) {
      CHECK(it->second == got);
      shared_kinds.insert(got);
    }
  }
  // The kernels a verify step spends its time in match by name: NCCL all-reduce, GEMM, attention
  // (and the logits all-gather).
  for (const char* k : {"nccl_allreduce", "gemm", "attention", "nccl_other"}) CHECK(shared_kinds.count(k));
  CHECK(predicted.count("q_b_proj") == 0);  // module names stay in args, not in slice names
}

TEST_CASE("trace: every backend drawn, kernel names per backend and runtime") {
  const json t = trace_of({"--allreduce", "nccl", "--allreduce", "custom"});
  std::set<std::string> process_names, allreduce_kernels;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") process_names.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "X" && e["cat"] == "all_reduce") allreduce_kernels.insert(e["name"].get<std::string>());
  }
  CHECK(process_names.count("nccl rank 0"));
  CHECK(process_names.count("custom rank 7"));
  CHECK(t["otherData"]["allreduce"] == json::array({"nccl", "custom"}));
  REQUIRE(allreduce_kernels.size() == 2);
  CHECK(allreduce_kernels.begin()->find("ncclDevKernel_AllReduce") == 0);
  CHECK(std::next(allreduce_kernels.begin())->find("sglang::cross_device_reduce") != std::string::npos);

  const json v = trace_of({"--allreduce", "custom", "--runtime", "vllm"});
  bool vllm_car = false;
  for (const auto& e : v["traceEvents"]) {
    if (e["ph"] != "X" || !e.contains("args") || !e["args"].contains("op")) continue;
    const std::string name = e["name"], kind = e["cat"];
    if (kind == "all_reduce") vllm_car = vllm_car || name.find("vllm::cross_device_reduce") != std::string::npos;
    INFO(name << " (" << kind << ")");  // vLLM's names read back into their op's class too
    CHECK(std::string(ingest::kernel_kind_name(ingest::classify_kernel(name))) == ingest_class_of(kind, "custom"));
  }
  CHECK(vllm_car);
}

TEST_CASE("trace: a flow joins each collective's ranks; the anchored wait sits in the collective") {
  const json t = trace_of({"--allreduce", "nccl"});
  // Collective slices per (pid, tid) to find the one each flow event binds to.
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> coll;
  std::map<long long, std::vector<std::pair<std::string, int>>> flows;  // id -> (ph, pid)
  std::vector<json> flow_events;
  int waits = 0;
  for (const auto& e : t["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "X" && (e["cat"] == "all_reduce" || e["cat"] == "all_gather"))
      coll[{e["pid"], e["tid"]}].push_back({e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
    if (ph == "X" && e["cat"] == "all_reduce" && e["args"]["wait_for_slowest_rank_us"].get<double>() > 0) ++waits;
    if (ph == "s" || ph == "t" || ph == "f") {
      flows[e["id"].get<long long>()].push_back({ph, e["pid"].get<int>()});
      flow_events.push_back(e);
    }
  }
  REQUIRE(!flows.empty());
  for (const auto& [id, evs] : flows) {
    INFO("flow " << id);
    REQUIRE(evs.size() == 8);  // TP 8: rank 0 -> ... -> rank 7
    CHECK(evs.front().first == "s");
    CHECK(evs.back().first == "f");
    for (int r = 0; r < 8; ++r) CHECK(evs[static_cast<std::size_t>(r)].second == r);
  }
  for (const auto& e : flow_events) {  // bound inside a collective slice of its rank
    const double ts = e["ts"];
    bool inside = false;
    for (const auto& [b, en] : coll[{e["pid"], e["tid"]}]) inside = inside || (b <= ts && ts <= en);
    CHECK(inside);
  }
  // The built-in's verify NCCL all-reduces are anchored at ~200 us: the model's rank wait shows there.
  CHECK(waits > 0);
}

TEST_CASE("trace: bounded size, the cycles sampled and said") {
  CHECK(traced_cycle_indices(10, 100, 10'000, 0) == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(traced_cycle_indices(10, 100, 300, 0) == std::vector<int>{0, 4, 9});
  CHECK(traced_cycle_indices(10, 100, 10'000, 2) == std::vector<int>{0, 9});
  CHECK(traced_cycle_indices(5, 1'000'000, 10, 0) == std::vector<int>{0});

  const std::string dir = fresh_dir();
  const auto r = run_specsim({"run", "--cycles", "50", "--trace", dir + "/t.json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("of the 50 simulated cycles drawn") != std::string::npos);
  const std::string text = slurp(dir + "/t.json");
  CHECK(text.size() < 100'000'000);
  // tens of MB: validated without building the document (a parse takes minutes under ASan); the
  // header object comes first in the file
  CHECK(json::accept(text));
  const std::size_t head = text.find(",\"traceEvents\"");
  REQUIRE(head != std::string::npos);
  const json t = json::parse(text.substr(0, head) + "}");
  CHECK(t["otherData"]["cycles"].get<int>() < 50);

  // one backend: half the events to parse
  const auto two = run_specsim(
      {"run", "--cycles", "50", "--allreduce", "nccl", "--trace-cycles", "2", "--trace", dir + "/two.json"});
  REQUIRE(two.exit_code == 0);
  std::set<std::string> cycles;
  const json two_trace = json::parse(slurp(dir + "/two.json"));
  for (const auto& e : two_trace["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "cycle" && e["pid"] == 0) cycles.insert(e["name"].get<std::string>());
  CHECK(cycles.size() == 2);
  REQUIRE(cycles.size() == 2);
  CHECK(cycles.begin()->rfind("cycle 0 (", 0) == 0);  // the first and the last
  CHECK(std::next(cycles.begin())->rfind("cycle 49 (", 0) == 0);
  CHECK(run_specsim({"run", "--cycles", "5", "--trace-cycles", "0", "--trace", dir + "/z.json"}).exit_code == 2);
  CHECK_FALSE(exists(dir + "/z.json"));
}

TEST_CASE("ingest classifies the kernels that say \"flash\" but are not attention, and fused MoE as GEMM") {
  using ingest::classify_kernel;
  using ingest::KernelKind;
  CHECK(classify_kernel("fused_moe_kernel") == KernelKind::Gemm);
  CHECK(classify_kernel("void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>(...)") == KernelKind::Other);
  CHECK(classify_kernel("void flashinfer::activation::act_and_mul_kernel<...>(...)") == KernelKind::Other);
  CHECK(classify_kernel("void flashinfer::BatchQKApplyRotaryPosIdsCosSinCacheKernel<...>(...)") == KernelKind::Other);
  CHECK(classify_kernel("void vllm::reshape_and_cache_flash_kernel<...>(...)") == KernelKind::Other);
  CHECK(classify_kernel("void flashinfer::BatchPrefillWithPagedKVCacheKernel<...>(...)") == KernelKind::Attention);
}
