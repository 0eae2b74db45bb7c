#include "scenario/scenario_file.h"

#include <algorithm>

#include "util/error.h"
#include "util/json_io.h"

namespace specsim {
using nlohmann::json;

json run_settings_json(const RunSpec& r) {
  return {{"tp_size", r.tp_size},
          {"speculative_algorithm", std::string(algo_name(r.algo))},
          {"speculative_num_steps", r.num_steps},
          {"speculative_eagle_topk", r.topk},
          {"speculative_num_draft_tokens", r.num_draft_tokens},
          {"batch_size", r.batch_size},
          {"context_len", r.context_len},
          {"cuda_graph_max_bs", r.cuda_graph_max_bs},
          {"disable_cuda_graph", r.disable_cuda_graph},
          {"nccl_p2p_level", r.nccl.p2p_level}};
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
  j["eager_phases"] = eager_list(r);
  j["nccl_algo_enabled"] = {{"tree", r.nccl.algo_enabled[0]}, {"ring", r.nccl.algo_enabled[1]}};
  j["nccl_proto_enabled"] = {
      {"LL", r.nccl.proto_enabled[0]}, {"LL128", r.nccl.proto_enabled[1]}, {"Simple", r.nccl.proto_enabled[2]}};
  if (r.num_gpus != 0 && r.num_gpus != r.tp_size) j["num_gpus"] = r.num_gpus;  // else: the tp size
  if (r.dtype) j["dtype"] = std::string(dtype_name(*r.dtype));
  if (r.accept_len) j["accept_len"] = *r.accept_len;
  if (r.accept_rate) j["accept_rate"] = *r.accept_rate;
  if (r.mem_fraction_static) j["mem_fraction_static"] = *r.mem_fraction_static;
  if (with_backends) {
    json a = json::array();
    for (const auto& c : r.allreduce) a.push_back(c.label());
    j["allreduce"] = a;
  }
  return j;
}

std::string enabled_list(const json& obj, const std::string& where) {
  std::string s;
  for (const auto& [k, v] : obj.items())
    if (v.is_boolean() ? v.get<bool>() : throw InputError("must be true or false", where + "." + k))
      s += (s.empty() ? "" : ",") + k;
  return s;
}

void fill_args(const json& st, RunArgs& a, const std::string& w) {
  auto i = [&](const char* k, std::optional<int>& v) {
    if (!v && st.contains(k)) v = json_int(st, k, w);
  };
  // The draft shape is one choice: a flag for any part of it replaces the file's whole shape.
  if (!a.num_steps && !a.topk && !a.num_draft_tokens) {
    i("speculative_num_steps", a.num_steps);
    i("speculative_eagle_topk", a.topk);
    i("speculative_num_draft_tokens", a.num_draft_tokens);
  }
  i("tp_size", a.tp_size);
  i("batch_size", a.batch_size);
  i("cuda_graph_max_bs", a.cuda_graph_max_bs);
  if (!a.num_gpus && st.contains("num_gpus") && json_int(st, "num_gpus", w) > 0)
    a.num_gpus = json_int(st, "num_gpus", w);
  if (!a.context_len && st.contains("context_len"))
    a.context_len = static_cast<long long>(json_double(st, "context_len", w));
  if (!a.algorithm && st.contains("speculative_algorithm")) a.algorithm = json_string(st, "speculative_algorithm", w);
  if (!a.disable_cuda_graph && st.value("disable_cuda_graph", false)) a.disable_cuda_graph = true;
  if (!a.eager_phases && st.contains("eager_phases")) a.eager_phases = json_string(st, "eager_phases", w);
  if (!a.dtype && st.contains("dtype")) a.dtype = json_string(st, "dtype", w);
  if (!a.accept_len && !a.accept_rate && st.contains("accept_len")) a.accept_len = json_double(st, "accept_len", w);
  if (!a.accept_len && !a.accept_rate && st.contains("accept_rate")) a.accept_rate = json_double(st, "accept_rate", w);
  if (!a.mem_fraction_static && st.contains("mem_fraction_static"))
    a.mem_fraction_static = json_double(st, "mem_fraction_static", w);
  if (a.allreduce.empty() && st.contains("allreduce"))
    for (const auto& b : st.at("allreduce")) a.allreduce.push_back(b.get<std::string>());
  if (!a.nccl_p2p_level && st.contains("nccl_p2p_level")) a.nccl_p2p_level = json_string(st, "nccl_p2p_level", w);
  if (!a.nccl_algo && st.contains("nccl_algo_enabled"))
    a.nccl_algo = enabled_list(st.at("nccl_algo_enabled"), w + ".nccl_algo_enabled");
  if (!a.nccl_proto && st.contains("nccl_proto_enabled"))
    a.nccl_proto = enabled_list(st.at("nccl_proto_enabled"), w + ".nccl_proto_enabled");
}

// SGLang's --config form: one flat mapping of flag names (dashes or underscores).
void fill_flat(const json& f, RunArgs& a, const std::string& w) {
  auto str = [&](const json& v, const std::string& k) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number() || v.is_boolean()) return v.dump();
    throw InputError("must be a string or a number", w + ": " + k);
  };
  auto num = [&](const json& v, const std::string& k) {
    if (!v.is_number()) throw InputError("must be a number", w + ": " + k);
    return v.get<double>();
  };
  auto integer = [&](const json& v, const std::string& k) {
    const double d = num(v, k);
    if (d != static_cast<double>(static_cast<int>(d))) throw InputError("must be an integer", w + ": " + k);
    return static_cast<int>(d);
  };
  for (const auto& item : f.items()) {
    // named, not a structured binding: lambdas below capture them (clang 14 cannot capture bindings)
    const std::string key = item.key();
    const json& v = item.value();
    std::string k = key;
    std::replace(k.begin(), k.end(), '-', '_');
    auto set_s = [&](std::optional<std::string>& o) {
      if (!o) o = str(v, key);
    };
    auto set_i = [&](std::optional<int>& o) {
      if (!o) o = integer(v, key);
    };
    auto set_d = [&](std::optional<double>& o) {
      if (!o) o = num(v, key);
    };
    if (k == "model_path" || k == "model")
      set_s(a.model_path);
    else if (k == "speculative_draft_model_path")
      set_s(a.draft_model_path);
    else if (k == "hardware")
      set_s(a.hardware);
    else if (k == "dtype")
      set_s(a.dtype);
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
    else if (k == "tp_size" || k == "tp")
      set_i(a.tp_size);
    else if (k == "num_gpus")
      set_i(a.num_gpus);
    else if (k == "speculative_num_steps")
      set_i(a.num_steps);
    else if (k == "speculative_eagle_topk")
      set_i(a.topk);
    else if (k == "speculative_num_draft_tokens")
      set_i(a.num_draft_tokens);
    else if (k == "batch_size")
      set_i(a.batch_size);
    else if (k == "cuda_graph_max_bs")
      set_i(a.cuda_graph_max_bs);
    else if (k == "context_len") {
      if (!a.context_len) a.context_len = static_cast<long long>(num(v, key));
    } else if (k == "disable_cuda_graph") {
      if (v.is_boolean())
        a.disable_cuda_graph |= v.get<bool>();
      else
        throw InputError("must be true or false", w + ": " + key);
    } else if (k == "accept_len")
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
      if (!a.allreduce.empty()) continue;
      if (v.is_array())
        for (const auto& b : v) a.allreduce.push_back(str(b, key));
      else
        a.allreduce.push_back(str(v, key));
    } else
      throw InputError(
          "not a setting specsim knows (SGLang flags that do not change the cycle are left out of "
          "scenario files)",
          w + ": " + key);
  }
  if (!a.model_path) throw InputError("missing: the model", w + ": model-path");
}

}  // namespace

json scenario_file_json(const Scenario& s, const std::string& model, const std::string& draft) {
  json f = {{"format", kFormat}, {"title", s.title},      {"notes", s.notes},
            {"model", model},    {"hardware", s.hw.spec}, {"settings", settings_json(s.run, !s.backends_defaulted)}};
  if (!draft.empty()) f["draft"] = draft;
  json measured = json::array();
  for (const auto& m : s.measured) {
    json j = {{"origin", m.origin}, {"hardware", m.hw.spec}, {"settings", settings_json(m.run, false)}};
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
  if (!f.is_object() || f.value("format", "") != kFormat)
    throw InputError(std::string("not a scenario file (\"format\": \"") + kFormat + "\" missing)", w + ": format");
  if (!a.model_path) a.model_path = json_string(f, "model", w);
  if (!a.draft_model_path && f.contains("draft")) a.draft_model_path = json_string(f, "draft", w);
  if (!a.hardware) a.hardware = json_string(f, "hardware", w);
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
      // The settings it was taken at, resolved as a run of the same model would be.
      RunArgs ma;
      ma.model_path = json_string(f, "model", w);
      if (f.contains("draft")) ma.draft_model_path = json_string(f, "draft", w);
      ma.hardware = json_string(mj, "hardware", wi);
      fill_args(mj.at("settings"), ma, wi + ".settings");
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
