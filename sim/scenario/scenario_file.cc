#include "scenario/scenario_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "scenario/settings_schema.h"
#include "scenario/sglang_draft_rule.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {
using nlohmann::json;

json run_settings_json(const RunSpec& r) {
  json j = {{"tp_size", r.tp_size},
            {"speculative_algorithm", std::string(algo_name(r.algo))},
            {"speculative_num_steps", r.num_steps},
            {"speculative_eagle_topk", r.topk},
            {"speculative_num_draft_tokens", r.num_draft_tokens},
            {"batch_size", r.batch_size},
            {"context_len", r.context_len},
            {"cuda_graph_max_bs", r.cuda_graph_max_bs},
            {"disable_cuda_graph", r.disable_cuda_graph},
            {"nccl_p2p_level", r.nccl.p2p_level}};
  if (r.attention_backend) j["attention_backend"] = *r.attention_backend;
  if (r.disable_overlap_schedule) j["disable_overlap_schedule"] = true;
  if (r.layout.active()) {
    j["ep_size"] = r.layout.ep;
    j["dp_size"] = r.layout.dp;
    j["enable_dp_attention"] = r.layout.dp_attention;
    j["moe_a2a_backend"] = a2a_backend_name(r.layout.a2a);
    // only where it means something: a file that names it without DeepEP would read back with a note
    if (r.layout.a2a == A2aBackend::DeepEP) j["deepep_mode"] = deepep_mode_name(r.layout.deepep_mode);
    j["ep_imbalance"] = r.layout.ep_imbalance;
    j["pp_size"] = r.layout.pp;
  }
  return j;
}

namespace {

constexpr const char* kFormat = "specsim-scenario-1";

std::string eager_list(const RunSpec& r) {
  std::string e;
  for (int i = 0; i < kNumPhaseKinds; ++i)
    if (r.force_eager[i]) e += (e.empty() ? "" : ",") + std::string(phase_name(static_cast<PhaseKind>(i)));
  return e.empty() ? "none" : e;
}

json settings_json(const RunSpec& r, bool with_backends) {
  json j = run_settings_json(r);
  if (!r.speculative())  // plain decoding has no draft: a shape here would read back as one given
    for (const char* k : {"speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens"})
      j.erase(k);
  j["eager_phases"] = eager_list(r);
  j["nccl_algo_enabled"] = {{"tree", r.nccl.algo_enabled[0]}, {"ring", r.nccl.algo_enabled[1]}};
  j["nccl_proto_enabled"] = {
      {"LL", r.nccl.proto_enabled[0]}, {"LL128", r.nccl.proto_enabled[1]}, {"Simple", r.nccl.proto_enabled[2]}};
  if (r.num_gpus != 0 && r.num_gpus != r.tp_size) j["num_gpus"] = r.num_gpus;  // else: the tp size
  if (r.nnodes != 1) j["nnodes"] = r.nnodes;
  if (r.dtype) j["dtype"] = std::string(dtype_name(*r.dtype));
  // The stack's format flags as given, so a saved run reads back with the same notes and checks.
  if (!r.quantization.empty()) j["quantization"] = r.quantization;
  if (r.kv_cache_dtype != "auto") j["kv_cache_dtype"] = r.kv_cache_dtype;
  if (r.accept_len) j["accept_len"] = *r.accept_len;
  if (r.accept_rate) j["accept_rate"] = *r.accept_rate;
  if (r.mem_fraction_static) j["mem_fraction_static"] = *r.mem_fraction_static;
  if (r.max_running_requests) j["max_running_requests"] = *r.max_running_requests;
  if (r.max_context_len) j["max_context_len"] = *r.max_context_len;
  if (r.max_total_tokens) j["max_total_tokens"] = *r.max_total_tokens;
  // SGLang's defaults by release, and the fusion as asked (on by its flag, or forced off); a
  // default of that release is found again on reading
  if (!r.sglang_release.empty()) j["sglang_release"] = r.sglang_release;
  if ((r.flashinfer_fusion && !r.flashinfer_fusion_by_default) || r.flashinfer_fusion_enforced_off)
    j["flashinfer_allreduce_fusion"] = !r.flashinfer_fusion_enforced_off;
  if (with_backends) {
    json a = json::array();
    for (const auto& c : r.allreduce) a.push_back(c.label());
    j["allreduce"] = a;
  }
  return j;
}

std::string enabled_list(const json& obj, const std::string& where, std::initializer_list<const char*> names) {
  if (!obj.is_object()) throw InputError("must be an object of true/false per name", where);
  std::string s;
  for (const auto& [k, v] : obj.items()) {
    const std::string& key = k;  // a structured binding cannot be captured before C++20 in clang 14
    if (std::none_of(names.begin(), names.end(), [&](const char* n) { return key == n; }))
      throw InputError("not a name specsim knows here", where + "." + k);
    if (setting_bool(v, where + "." + k)) s += (s.empty() ? "" : ",") + k;
  }
  return s;
}

std::vector<std::string> string_list(const json& v, const std::string& where) {
  std::vector<std::string> out;
  if (!v.is_array()) return {setting_string(v, where)};
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(setting_string(v[i], where + "[" + std::to_string(i) + "]"));
  if (out.empty()) throw InputError("an empty list: give at least one, or leave the key out", where);
  return out;
}

// The keys of a scenario file's `settings` (as settings_json writes them).
constexpr std::array kSettingsKeys = {"tp_size",
                                      "speculative_algorithm",
                                      "speculative_num_steps",
                                      "speculative_eagle_topk",
                                      "speculative_num_draft_tokens",
                                      "batch_size",
                                      "context_len",
                                      "cuda_graph_max_bs",
                                      "disable_cuda_graph",
                                      "disable_overlap_schedule",
                                      "nccl_p2p_level",
                                      "eager_phases",
                                      "nccl_algo_enabled",
                                      "nccl_proto_enabled",
                                      "num_gpus",
                                      "nnodes",
                                      "dtype",
                                      "quantization",
                                      "kv_cache_dtype",
                                      "accept_len",
                                      "accept_rate",
                                      "mem_fraction_static",
                                      "max_running_requests",
                                      "max_context_len",
                                      "max_total_tokens",
                                      "sglang_release",
                                      "flashinfer_allreduce_fusion",
                                      "allreduce",
                                      "runtime",
                                      "attention_backend",
                                      "ep_size",
                                      "dp_size",
                                      "enable_dp_attention",
                                      "moe_a2a_backend",
                                      "deepep_mode",
                                      "ep_imbalance",
                                      "pp_size"};

// The file's draft shape under the command line's: a flag changes its own part and the file's
// other parts stay, as a sweep axis changes them (a what-if on a saved run moves one knob); a
// chain (topk 1) keeps draft tokens = steps + 1. A partial shape in the file is filled part by
// part, the run's defaults completing it.
void merge_draft_shape(RunArgs& a, std::optional<int> steps, std::optional<int> topk, std::optional<int> draft_tokens) {
  if (a.num_steps && a.topk && a.num_draft_tokens) return;  // the flags' whole shape: nothing kept
  if (!(steps && topk && draft_tokens) || !(a.num_steps || a.topk || a.num_draft_tokens)) {
    if (!a.num_steps) a.num_steps = steps;
    if (!a.topk) a.topk = topk;
    if (!a.num_draft_tokens) a.num_draft_tokens = draft_tokens;
    return;
  }
  RunSpec r;
  r.num_steps = *steps, r.topk = *topk, r.num_draft_tokens = *draft_tokens;
  apply_draft_shape(r, a.topk, a.num_steps, a.num_draft_tokens);
  if (r.topk == 1) {  // a chain: steps or draft tokens fixes the other, which the run derives and says
    a.topk = 1;
    if (!a.num_steps && !a.num_draft_tokens) a.num_steps = r.num_steps;
    return;
  }
  // a part kept from the file may not suit the flags' (4, 2, 6 asked for 1 step): say whose it is
  if (const std::string why = accept::draft_shape_problem(r.num_steps, r.topk, r.num_draft_tokens); !why.empty())
    throw InputError(fmt::format("steps {}, topk {}, {} draft tokens, the scenario file's shape with the flags' parts: "
                                 "{}; give the draft shape's other flags too",
                                 r.num_steps, r.topk, r.num_draft_tokens, why),
                     !a.num_draft_tokens ? "--speculative-num-draft-tokens"
                     : !a.topk           ? "--speculative-eagle-topk"
                                         : "--speculative-num-steps");
  a.num_steps = r.num_steps, a.topk = r.topk, a.num_draft_tokens = r.num_draft_tokens;
}

void fill_args(const json& st, RunArgs& a, const std::string& w) {
  if (!st.is_object()) throw InputError("must be an object of settings", w);
  for (const auto& item : st.items())
    if (std::find(kSettingsKeys.begin(), kSettingsKeys.end(), item.key()) == kSettingsKeys.end())
      throw InputError("not a setting specsim knows (it writes: tp_size, speculative_*, batch_size, context_len, ...)",
                       w + "." + item.key());
  auto at = [&](const char* k) { return w + "." + k; };
  auto i = [&](const char* k, std::optional<int>& v, const FlagRange& r) {
    if (!st.contains(k)) return;
    const auto n = static_cast<int>(setting_int(st.at(k), r, at(k)));  // checked even when a flag wins
    if (!v) v = n;
  };
  auto d = [&](const char* k, std::optional<double>& v) {
    if (!st.contains(k)) return;
    const double x = setting_number(st.at(k), at(k));
    if (!v) v = x;
  };
  auto str = [&](const char* k, std::optional<std::string>& v) {
    if (!st.contains(k)) return;
    std::string x = setting_string(st.at(k), at(k));
    if (!v) v = std::move(x);
  };
  namespace fr = flag_ranges;
  std::optional<int> steps, topk, draft_tokens;
  i("speculative_num_steps", steps, fr::kNumSteps);
  i("speculative_eagle_topk", topk, fr::kTopk);
  i("speculative_num_draft_tokens", draft_tokens, fr::kDraftTokens);
  merge_draft_shape(a, steps, topk, draft_tokens);
  i("tp_size", a.tp_size, fr::kTpSize);
  i("batch_size", a.batch_size, fr::kBatchSize);
  i("cuda_graph_max_bs", a.cuda_graph_max_bs, fr::kCudaGraphMaxBs);
  i("num_gpus", a.num_gpus, fr::kNumGpus);
  i("nnodes", a.nnodes, fr::kNnodes);
  if (st.contains("context_len")) {
    const long long n = setting_int(st.at("context_len"), fr::kContextLen, at("context_len"));
    if (!a.context_len) a.context_len = n;
  }
  str("speculative_algorithm", a.algorithm);
  if (st.contains("disable_cuda_graph") && setting_bool(st.at("disable_cuda_graph"), at("disable_cuda_graph")))
    a.disable_cuda_graph = true;
  if (st.contains("disable_overlap_schedule") &&
      setting_bool(st.at("disable_overlap_schedule"), at("disable_overlap_schedule")))
    a.disable_overlap_schedule = true;
  str("eager_phases", a.eager_phases);
  str("dtype", a.dtype);
  str("quantization", a.quantization);
  str("kv_cache_dtype", a.kv_cache_dtype);
  str("runtime", a.runtime);
  str("attention_backend", a.attention_backend);
  str("sglang_release", a.sglang_release);
  if (st.contains("flashinfer_allreduce_fusion") && !a.enable_flashinfer_allreduce_fusion &&
      !a.enforce_disable_flashinfer_allreduce_fusion)  // a flag given beside the file wins
    (setting_bool(st.at("flashinfer_allreduce_fusion"), at("flashinfer_allreduce_fusion"))
         ? a.enable_flashinfer_allreduce_fusion
         : a.enforce_disable_flashinfer_allreduce_fusion) = true;
  std::optional<double> len, rate;
  d("accept_len", len);
  d("accept_rate", rate);
  if (!a.accept_len && !a.accept_rate) {  // the file's accept len, else its rate
    if (len)
      a.accept_len = len;
    else
      a.accept_rate = rate;
    // measured at the file's draft shape: a flag that changes the shape must not reuse it as is
    if (len && steps && topk && draft_tokens) a.accept_len_shape = std::array<int, 3>{*steps, *topk, *draft_tokens};
  }
  d("mem_fraction_static", a.mem_fraction_static);
  // the launch's limits hold whatever flags run the file (a later pasted command's replace them)
  i("max_running_requests", a.max_running_requests, fr::kBatchSize);
  for (const auto& [k, v] :
       {std::pair{"max_context_len", &a.max_context_len}, {"max_total_tokens", &a.max_total_tokens}})
    if (st.contains(k) && !*v) *v = setting_int(st.at(k), fr::kContextLen, at(k));
  if (st.contains("allreduce")) {
    auto list = string_list(st.at("allreduce"), at("allreduce"));
    if (a.allreduce.empty()) a.allreduce = std::move(list);
  }
  str("nccl_p2p_level", a.nccl_p2p_level);
  i("ep_size", a.parallel.ep_size, fr::kEpSize);
  i("dp_size", a.parallel.dp_size, fr::kDpSize);
  i("pp_size", a.parallel.pp_size, fr::kPpSize);
  if (st.contains("enable_dp_attention") && setting_bool(st.at("enable_dp_attention"), at("enable_dp_attention")))
    a.parallel.enable_dp_attention = true;
  str("moe_a2a_backend", a.parallel.moe_a2a_backend);
  str("deepep_mode", a.parallel.deepep_mode);
  d("ep_imbalance", a.parallel.ep_imbalance);
  if (st.contains("nccl_algo_enabled")) {
    auto l = enabled_list(st.at("nccl_algo_enabled"), at("nccl_algo_enabled"), {"tree", "ring"});
    if (!a.nccl_algo) a.nccl_algo = std::move(l);
  }
  if (st.contains("nccl_proto_enabled")) {
    auto l = enabled_list(st.at("nccl_proto_enabled"), at("nccl_proto_enabled"), {"LL", "LL128", "Simple"});
    if (!a.nccl_proto) a.nccl_proto = std::move(l);
  }
}

// SGLang's --config form: one flat mapping of flag names (dashes or underscores).
void fill_flat(const json& f, RunArgs& a, const std::string& w) {
  refuse_duplicate_settings(f, w);
  namespace fr = flag_ranges;
  for (const auto& item : f.items()) {
    // named, not a structured binding: lambdas below capture them (clang 14 cannot capture bindings)
    const std::string key = item.key();
    const json& v = item.value();
    const std::string k = canonical_setting_key(key), at = w + ": " + key;
    // A number where SGLang takes a word (--dtype 16) is read as its text, as SGLang's parser would.
    auto set_s = [&](std::optional<std::string>& o) {
      std::string x = v.is_number() ? v.dump() : setting_string(v, at);
      if (!o) o = std::move(x);
    };
    auto set_i = [&](std::optional<int>& o, const FlagRange& r) {
      const auto n = static_cast<int>(setting_int(v, r, at));
      if (!o) o = n;
    };
    auto set_d = [&](std::optional<double>& o) {
      const double x = setting_number(v, at);
      if (!o) o = x;
    };
    if (k == "model_path")
      set_s(a.model_path);
    else if (k == "speculative_draft_model_path")
      set_s(a.draft_model_path);
    else if (k == "hardware")
      set_s(a.hardware);
    else if (k == "dtype")
      set_s(a.dtype);
    else if (k == "quantization")
      set_s(a.quantization);
    else if (k == "kv_cache_dtype")
      set_s(a.kv_cache_dtype);
    else if (k == "runtime")
      set_s(a.runtime);
    else if (k == "attention_backend")
      set_s(a.attention_backend);
    else if (k == "speculative_algorithm")
      set_s(a.algorithm);
    else if (k == "eager_phases")
      set_s(a.eager_phases);
    else if (k == "nccl_p2p_level")
      set_s(a.nccl_p2p_level);
    else if (k == "nccl_algo")
      set_s(a.nccl_algo);
    else if (k == "nccl_proto")
      set_s(a.nccl_proto);
    else if (k == "tp_size")
      set_i(a.tp_size, fr::kTpSize);
    else if (k == "num_gpus")
      set_i(a.num_gpus, fr::kNumGpus);
    else if (k == "nnodes")
      set_i(a.nnodes, fr::kNnodes);
    else if (k == "speculative_num_steps")
      set_i(a.num_steps, fr::kNumSteps);
    else if (k == "speculative_eagle_topk")
      set_i(a.topk, fr::kTopk);
    else if (k == "speculative_num_draft_tokens")
      set_i(a.num_draft_tokens, fr::kDraftTokens);
    else if (k == "batch_size")
      set_i(a.batch_size, fr::kBatchSize);
    else if (k == "cuda_graph_max_bs")
      set_i(a.cuda_graph_max_bs, fr::kCudaGraphMaxBs);
    else if (k == "context_len") {
      const long long n = setting_int(v, fr::kContextLen, at);
      if (!a.context_len) a.context_len = n;
    } else if (k == "disable_cuda_graph")
      a.disable_cuda_graph |= setting_bool(v, at);
    else if (k == "disable_overlap_schedule")
      a.disable_overlap_schedule |= setting_bool(v, at);
    else if (k == "enable_flashinfer_allreduce_fusion")
      a.enable_flashinfer_allreduce_fusion |= setting_bool(v, at);
    else if (k == "enforce_disable_flashinfer_allreduce_fusion")
      a.enforce_disable_flashinfer_allreduce_fusion |= setting_bool(v, at);
    else if (k == "sglang_release")
      set_s(a.sglang_release);
    else if (k == "flashinfer_allreduce_fusion_backend")  // v0.5.14 on: a backend (not null) is on
      a.enable_flashinfer_allreduce_fusion |= !v.is_null();
    else if (k == "ep_size" || k == "expert_parallel_size" || k == "ep")
      set_i(a.parallel.ep_size, fr::kEpSize);
    else if (k == "dp_size" || k == "data_parallel_size" || k == "dp")
      set_i(a.parallel.dp_size, fr::kDpSize);
    else if (k == "pp_size" || k == "pipeline_parallel_size" || k == "pp")
      set_i(a.parallel.pp_size, fr::kPpSize);
    else if (k == "enable_dp_attention")
      a.parallel.enable_dp_attention |= setting_bool(v, at);
    else if (k == "moe_a2a_backend")
      set_s(a.parallel.moe_a2a_backend);
    else if (k == "deepep_mode")
      set_s(a.parallel.deepep_mode);
    else if (k == "ep_imbalance")
      set_d(a.parallel.ep_imbalance);
    else if (k == "accept_len")
      set_d(a.accept_len);
    else if (k == "accept_rate")
      set_d(a.accept_rate);
    else if (k == "mem_fraction_static")
      set_d(a.mem_fraction_static);
    else if (k == "measured_baseline_tok_s")
      set_d(a.measured_baseline_tok_s);
    else if (k == "measured_allreduce_us")
      set_d(a.measured_allreduce_us);
    else if (k == "measured_spec_tok_s")
      set_d(a.measured_spec_tok_s);
    else if (k == "allreduce") {
      auto list = string_list(v, at);
      if (a.allreduce.empty()) a.allreduce = std::move(list);
    } else
      throw InputError(
          "not a setting specsim knows (SGLang flags that do not change the cycle are left out of "
          "scenario files)",
          at);
  }
  if (!a.model_path) throw InputError("missing: the model", w + ": model-path");
}

}  // namespace

json scenario_file_json(const Scenario& s, const std::string& model, const std::string& draft,
                        const std::string& runtime) {
  json f = {{"format", kFormat}, {"title", s.title},      {"notes", s.notes},
            {"model", model},    {"hardware", s.hw.spec}, {"settings", settings_json(s.run, !s.backends_defaulted)}};
  // The runtime as given (a name or a profile path), else the one the scenario costs.
  f["settings"]["runtime"] = !runtime.empty() ? runtime : s.runtime ? s.runtime->name : std::string("none");
  if (!draft.empty()) f["draft"] = draft;
  json measured = json::array();
  for (const auto& m : s.measured) {
    // A measurement taken with the stack's own all-reduce keeps it (the anchors price it so).
    const bool stack_ar = m.run.allreduce.size() == 1 && (m.run.allreduce.front().kind_name() == "sglang" ||
                                                          m.run.allreduce.front().kind_name() == "vllm");
    json j = {{"origin", m.origin}, {"hardware", m.hw.spec}, {"settings", settings_json(m.run, stack_ar)}};
    auto put = [&](const char* k, const std::optional<double>& v, const std::string& src) {
      if (v) j[k] = {{"value", *v}, {"source", src}};
    };
    put("baseline_tok_s", m.run.measured_baseline_tok_s, m.baseline_source);
    put("allreduce_us", m.run.measured_allreduce_us, m.allreduce_source);
    put("spec_tok_s", m.run.measured_spec_tok_s, m.spec_source);
    measured.push_back(j);
  }
  f["measured"] = measured;
  return f;
}

namespace {
void args_from_file(const json& f, RunArgs& a, const std::string& w) {
  if (f.is_object() && !f.contains("format")) return fill_flat(f, a, w);
  // (a "format" that is not a string is no scenario's either: json::value would throw on it)
  if (!f.is_object() || !f.at("format").is_string() || f.at("format").get<std::string>() != kFormat)
    throw InputError(std::string("not a scenario file (\"format\": \"") + kFormat + "\" missing)", w + ": format");
  // `source` and `sources` say where the file's values come from (the built-in scenario's).
  static constexpr std::array kKeys = {"format",   "title",    "notes",    "model",  "draft",
                                       "hardware", "settings", "measured", "source", "sources"};
  for (const auto& item : f.items())
    if (std::find(kKeys.begin(), kKeys.end(), item.key()) == kKeys.end())
      throw InputError(
          "not a key of a scenario file (format, title, notes, model, draft, hardware, settings, measured)",
          w + ": " + item.key());
  if (f.contains("title") && !f.at("title").is_string()) throw InputError("must be a string", w + ": title");
  if (f.contains("notes")) {
    if (!f.at("notes").is_array()) throw InputError("must be a list of strings", w + ": notes");
    for (std::size_t i = 0; i < f.at("notes").size(); ++i)
      if (!f.at("notes")[i].is_string()) throw InputError("must be a string", w + ": notes[" + std::to_string(i) + "]");
  }
  if (f.contains("measured") && !f.at("measured").is_array())
    throw InputError("must be a list of measurements", w + ": measured");
  auto required = [&](const char* k, std::optional<std::string>& v) {
    if (f.contains(k)) {
      std::string x = setting_string(f.at(k), w + ": " + k);
      if (!v) v = std::move(x);
    } else if (!v) {
      throw InputError("missing field '" + std::string(k) + "'", w + ": " + k);
    }
  };
  required("model", a.model_path);
  if (f.contains("draft")) {
    std::string d = setting_string(f.at("draft"), w + ": draft");
    if (!a.draft_model_path) a.draft_model_path = std::move(d);
  }
  required("hardware", a.hardware);
  if (!f.contains("settings") || !f["settings"].is_object()) throw InputError("missing object", w + ": settings");
  fill_args(f["settings"], a, w + ": settings");
}
}  // namespace

void args_from_scenario_file(const json& f, RunArgs& a, const std::string& w) {
  const bool accept_given = a.accept_len || a.accept_rate;
  args_from_file(f, a, w);
  // Said as where it came from: the report does not call it given on the command line.
  if (!accept_given && (a.accept_len || a.accept_rate)) a.accept_source = "scenario file " + w;
}

void apply_scenario_file(const json& f, Scenario& s, const std::string& w) {
  if (!f.contains("format")) return;  // SGLang's --config form: flags only
  std::vector<MeasuredRun> runs;
  if (f.contains("measured")) {
    int i = 0;
    for (const auto& mj : f.at("measured")) {
      const std::string wi = w + ": measured[" + std::to_string(i++) + "]";
      if (!mj.is_object() || !mj.contains("settings"))
        throw InputError("must be an object with origin, hardware, settings and the measured values", wi);
      for (const auto& item : mj.items())
        if (item.key() != "origin" && item.key() != "hardware" && item.key() != "settings" &&
            item.key() != "baseline_tok_s" && item.key() != "allreduce_us" && item.key() != "spec_tok_s")
          throw InputError(
              "not a key of a measurement (origin, hardware, settings, baseline_tok_s, allreduce_us, "
              "spec_tok_s)",
              wi + "." + item.key());
      // The settings it was taken at, resolved as a run of the same model would be.
      RunArgs ma;
      ma.model_path = json_string(f, "model", w);
      if (f.contains("draft")) ma.draft_model_path = json_string(f, "draft", w);
      ma.hardware = json_string(mj, "hardware", wi);
      fill_args(mj.at("settings"), ma, wi + ".settings");
      // Taken on the scenario's serving runtime unless its settings name another (the runtime
      // decides what the measurement ran: SGLang's attention backends, the runtime's own terms).
      if (!ma.runtime && f.contains("settings") && f.at("settings").contains("runtime"))
        fill_args(json{{"runtime", f.at("settings").at("runtime")}}, ma, w + ".settings");
      // Taken with a known accept len, a speculative tok/s reveals the cycle; without one, the
      // acceptance (the placeholder only lets the settings resolve).
      const std::optional<double> measured_accept_len = ma.accept_len;
      if (!ma.accept_len) ma.accept_len = 1.0;
      ma.accept_rate.reset();
      const Scenario ms = resolve_scenario(ma);
      if (!s.draft && ms.draft) s.draft = ms.draft;  // a run without speculation projects from a measured one
      MeasuredRun m;
      m.origin = json_string(mj, "origin", wi);
      m.run = ms.run;
      m.run.accept_len = measured_accept_len;
      m.hw = ms.hw;
      auto get = [&](const char* k, std::optional<double>& v, std::string& src) {
        if (!mj.contains(k)) return;
        v = json_double(mj.at(k), "value", wi + "." + k);
        src = json_string(mj.at(k), "source", wi + "." + k);
      };
      get("baseline_tok_s", m.run.measured_baseline_tok_s, m.baseline_source);
      get("allreduce_us", m.run.measured_allreduce_us, m.allreduce_source);
      get("spec_tok_s", m.run.measured_spec_tok_s, m.spec_source);
      validate_run(m.run);
      runs.push_back(std::move(m));
    }
  }
  for (auto& m : s.measured) runs.push_back(std::move(m));  // the command line's come after the file's
  s.measured = std::move(runs);
  s.title = f.value("title", s.title);
  std::vector<std::string> notes;
  if (f.contains("notes"))
    for (const auto& n : f.at("notes")) notes.push_back(n.get<std::string>());
  for (const auto& n : s.notes)
    if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
  s.notes = std::move(notes);
}

}  // namespace specsim
