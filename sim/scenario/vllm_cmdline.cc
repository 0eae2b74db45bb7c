#include "scenario/vllm_cmdline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>

#include "scenario/command_values.h"
#include "scenario/flag_ranges.h"
#include "scenario/model_spec.h"
#include "util/error.h"
#include "util/json_io.h"
#include "util/text.h"

namespace specsim {

namespace {

using nlohmann::json;

// vLLM's speculative methods as specsim's algorithms; the rest are not priced.
std::string algorithm_of(const std::string& method, const std::string& at) {
  const std::string m = ascii_lower(method);
  if (m == "eagle3") return "EAGLE3";
  if (m == "eagle") return "EAGLE";
  if (m == "mtp" || m == "deepseek_mtp") return "NEXTN";
  throw InputError("not modelled: --speculative-config method '" + method +
                       "' changes the draft (specsim prices eagle3, eagle and DeepSeek's mtp)",
                   at);
}

// draft_tensor_parallel_size: vLLM takes 1 or the target's tp size, and an EAGLE draft defaults
// to the target's (SpeculativeConfig._verify_and_get_draft_tp). specsim runs the draft at the
// target's tp, so that value, stated, changes nothing; 1 under a larger tp is not priced.
void check_draft_tp(const json& v, const RunArgs& a, std::vector<std::string>& notes, const std::string& at) {
  const std::string where = at + ": draft_tensor_parallel_size";
  if (!v.is_number_integer()) throw InputError("is not an integer", where);
  const long long draft_tp = v.get<long long>();
  const int tp = a.tp_size.value_or(1);
  if (draft_tp == tp) {
    notes.push_back(
        fmt::format("draft_tensor_parallel_size {}: the target's tp size, vLLM's default for an "
                    "EAGLE draft",
                    draft_tp));
    return;
  }
  if (draft_tp == 1)
    throw InputError(fmt::format("not modelled: a draft on one rank under --tensor-parallel-size {} (specsim "
                                 "runs the draft at the target's tp): drop the key or give {}",
                                 tp, tp),
                     where);
  throw InputError(fmt::format("{} is neither 1 nor the target's --tensor-parallel-size {}, the two values "
                               "vLLM takes: give {}",
                               draft_tp, tp, tp),
                   where);
}

// The config.json of a model the command names (a config or folder, a zoo name, or a Hugging Face
// id or path of a zoo model); an empty object where it is not held here.
json held_model_config(const std::string& model, const std::string& at) {
  for (const std::string& name : {model, zoo_name_of_model_arg(model)}) {
    if (name.empty()) continue;
    try {
      return read_json_file(resolve_model_config(name, at));
    } catch (const InputError&) {
    }
  }
  return json::object();
}

// The MTP layers of the model a --speculative-config names (num_nextn_predict_layers; 0 where it
// gives none or the model is not held here): vLLM's MTP draft config takes them as its n_predict,
// and num_speculative_tokens defaults to that (vllm/config/speculative.py, hf_config_override).
int named_model_mtp_layers(const std::string& model, const std::string& at) {
  const json cfg = held_model_config(model, at);
  const auto it = cfg.find("num_nextn_predict_layers");
  return it != cfg.end() && it->is_number_integer() ? it->get<int>() : 0;
}

// The JSON of --speculative-config, as vLLM's SpeculativeConfig takes it: the method (or, without
// one, the draft's name: vLLM reads eagle3 / eagle there), the steps (a chain: topk 1, steps + 1
// tokens verified) and the draft.
void apply_speculative(const json& j, RunArgs& a, std::vector<std::string>& notes, const std::string& at) {
  if (!j.is_object()) throw InputError("--speculative-config is not a JSON object", at);
  if (j.contains("draft_tensor_parallel_size")) check_draft_tp(j["draft_tensor_parallel_size"], a, notes, at);
  std::string method;
  if (j.contains("method")) {
    if (!j["method"].is_string()) throw InputError("method is not a string", at + ": method");
    method = j["method"].get<std::string>();
  }
  if (j.contains("model")) {
    if (!j["model"].is_string()) throw InputError("model is not a string", at + ": model");
    const std::string draft = j["model"].get<std::string>();
    if (method.empty()) {  // vLLM infers the method from the draft's name; "[ngram]" names the method
      const std::string d = ascii_lower(draft);
      if (d == "[ngram]" || d == "ngram") algorithm_of("ngram", at);  // refused, naming the method
      method = d.find("eagle3") != std::string::npos ? "eagle3" : d.find("eagle") != std::string::npos ? "eagle" : "";
      if (method.empty())
        throw InputError("not modelled: a --speculative-config draft model without an eagle method ('" + draft +
                             "' runs vLLM's draft-model speculation)",
                         at);
    }
    set_pasted_draft(a, draft, at + ": model");
  }
  // SpeculativeConfig: steps without a draft on a target of these model types run the target's own
  // MTP layer (vLLM v0.11 vllm/config/speculative.py; model_type from the target's config.json)
  if (method.empty() && !j.contains("model") && j.contains("num_speculative_tokens") && a.model_path) {
    // a model not held here has no type: the error below asks for the method
    const json cfg = held_model_config(*a.model_path, at);
    const std::string type =
        cfg.contains("model_type") && cfg["model_type"].is_string() ? cfg["model_type"].get<std::string>() : "";
    for (const char* t : {"deepseek_v3", "deepseek_v32", "mimo", "ernie4_5_moe", "qwen3_next"})
      if (type == t) {
        method = "mtp";
        notes.push_back("--speculative-config without a method or model on a " + type +
                        " target: vLLM runs the target's own MTP layer (method mtp)");
      }
  }
  if (method.empty())
    throw InputError("--speculative-config names no method: give \"method\": \"eagle3\" (or eagle, mtp)", at);
  a.algorithm = algorithm_of(method, at);
  // the other keys, once the method is known to be one specsim prices
  for (const auto& [k, v] : j.items()) {
    // v0.11's default drafting without GPU->CPU syncs (vLLM PR 24539), which the profile describes
    if (k == "disable_padded_drafter_batch" && v == false) {
      notes.push_back("disable_padded_drafter_batch false: vLLM 0.11's default padded drafting");
      continue;
    }
    if (k != "method" && k != "model" && k != "num_speculative_tokens" && k != "draft_tensor_parallel_size")
      throw InputError("not modelled: --speculative-config key '" + k + "' (" + v.dump() +
                           ") changes the draft or its verification (specsim reads method, model, "
                           "num_speculative_tokens, draft_tensor_parallel_size)",
                       at);
  }
  if (!j.contains("num_speculative_tokens")) {
    // vLLM builds a draft config only for a named model; an MTP draft's gives its n_predict
    const int layers =
        *a.algorithm == "NEXTN" && j.contains("model") ? named_model_mtp_layers(j["model"].get<std::string>(), at) : 0;
    if (layers <= 0)
      throw InputError(
          "--speculative-config needs num_speculative_tokens (the draft steps), as vLLM does unless the draft "
          "model's config gives n_predict (an MTP method with \"model\" set to a target with MTP layers)",
          at);
    notes.push_back(fmt::format(
        "--speculative-config without num_speculative_tokens: vLLM drafts {} step{} a cycle, the named model's "
        "num_nextn_predict_layers (its MTP draft's n_predict)",
        layers, layers == 1 ? "" : "s"));
    a.num_steps = layers, a.topk = 1, a.num_draft_tokens = layers + 1;
    return;
  }
  const json& n = j["num_speculative_tokens"];
  if (!n.is_number_integer()) throw InputError("is not an integer", at + ": num_speculative_tokens");
  // checked here, where the user wrote it: the run's own range is --speculative-num-steps'
  const long long steps = n.get<long long>();
  if (steps < flag_ranges::kNumSteps.lo || steps > flag_ranges::kNumSteps.hi)
    throw InputError(fmt::format("{} is out of range: {}..{} draft tokens (steps) a cycle", steps,
                                 flag_ranges::kNumSteps.lo, flag_ranges::kNumSteps.hi),
                     at + ": num_speculative_tokens");
  a.num_steps = static_cast<int>(steps);
  a.topk = 1;
  a.num_draft_tokens = *a.num_steps + 1;
}

const FlagAppliers& vllm_appliers() {
  static const FlagAppliers kApply = {
      {"--model", [](const PastedFlag& f, RunArgs& a, std::vector<std::string>& notes,
                     const std::string&) { set_pasted_model(a, f.last(), notes); }},
      {"--pipeline-parallel-size", [](const PastedFlag& f, RunArgs& a, auto&,
                                      const std::string& at) { a.parallel.pp_size = command_int(f.last(), at); }},
      {"--tensor-parallel-size",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string& at) { a.tp_size = command_int(f.last(), at); }},
      {"--speculative-config", [](const PastedFlag&, RunArgs&, auto&, const std::string&) {}},  // read whole, below
      // ep = tp x dp (vLLM's FusedMoEParallelConfig); applied below, once the tp size is known
      {"--enable-expert-parallel", [](const PastedFlag&, RunArgs&, auto&, const std::string&) {}},
      {"--quantization", [](const PastedFlag& f, RunArgs& a, auto&, const std::string&) { a.quantization = f.last(); }},
      {"--kv-cache-dtype",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string&) {
         if (f.last() == "auto")
           a.kv_cache_dtype.reset();
         else
           a.kv_cache_dtype = f.last();
       }},
      {"--disable-custom-all-reduce",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string&) { a.disable_custom_all_reduce = !f.negated; }},
      {"--enforce-eager",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string&) { a.disable_cuda_graph = !f.negated; }},
      {"--cuda-graph-sizes",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string& at) {
         // vLLM: one size N captures up to N; several are the sizes themselves.
         int most = 0;
         for (const auto& v : f.values) most = std::max(most, command_int(v, at));
         a.cuda_graph_max_bs = most;
       }},
      // later vLLM: the cap one value of --cuda-graph-sizes was (--cudagraph-capture-sizes lists sizes)
      {"--max-cudagraph-capture-size", [](const PastedFlag& f, RunArgs& a, auto&,
                                          const std::string& at) { a.cuda_graph_max_bs = command_int(f.last(), at); }},
      {"--gpu-memory-utilization",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string& at) {
         a.mem_fraction_static = command_fraction(f.last(), at);
       }},
      {"--dtype",
       [](const PastedFlag& f, RunArgs& a, auto& notes, const std::string&) {
         if (keeps_quantized_weights(a, f.last(), notes)) return;
         if (f.last() == "auto")
           a.dtype.reset();
         else
           a.dtype = f.last();
       }},
      {"--max-model-len",
       [](const PastedFlag& f, RunArgs&, auto&, const std::string& at) { command_human_int(f.last(), at); }},
      {"--max-num-seqs", [](const PastedFlag& f, RunArgs& a, auto&,
                            const std::string& at) { a.vllm_max_num_seqs = command_positive_int(f.last(), at); }},
  };
  return kApply;
}

}  // namespace

const std::vector<std::string>& vllm_applied_flags() {
  static const std::vector<std::string> kFlags = applier_flags(vllm_appliers());
  return kFlags;
}

RunArgs args_from_vllm(const CommandFlags& c, std::vector<std::string>& notes) {
  RunArgs a;
  json spec;          // --speculative-config '{...}' and its --speculative-config.KEY VALUE parts, last wins
  std::string older;  // earlier releases' flags read as its keys, named where it is refused
  for (const auto& f : c.flags) {
    if (!f.row || f.cls != FlagClass::Modelled) continue;
    const std::string at = c.where + ": " + f.given;
    if (f.row->flag == "--speculative-config") {
      if (f.values.empty()) throw InputError("needs a value", at);
      if (f.older_spelling) {
        older += (older.empty() ? "" : ", ") + f.given;
        // the V0 releases' default verification, which V1 runs anyway (v0.11 has no such key)
        if (f.sub == "acceptance_method" && f.last() == "rejection_sampler") {
          notes.push_back(f.given + " rejection_sampler: the default verification, which the V1 engine runs");
          continue;
        }
      }
      if (!f.sub.empty()) {
        const json v = json::parse(f.last(), nullptr, false);
        spec[f.sub] = v.is_discarded() ? json(f.last()) : v;
        continue;
      }
      const json j = json::parse(f.last(), nullptr, false);
      if (j.is_discarded()) throw InputError("'" + f.last() + "' is not JSON", at);
      spec = j;
      continue;
    }
    if (!f.sub.empty()) throw InputError("takes no .KEY part", at);
    apply_modelled(vllm_appliers(), f, a, notes, at);
  }
  if (!a.model_path) throw InputError("the vLLM command names no model (vllm serve MODEL, or --model)", c.where);
  if (spec.is_null())
    a.algorithm = "NONE";  // no --speculative-config: vLLM decodes plainly
  else
    apply_speculative(spec, a, notes,
                      c.where + ": --speculative-config" + (older.empty() ? "" : " (as read from " + older + ")"));
  // vLLM 0.11 at dp 1: experts split over the tp ranks, every rank holding every token and the
  // outputs summed by the all-reduce (its all-to-all kernels need dp > 1).
  if (const PastedFlag* ep = c.last("--enable-expert-parallel"); ep && !ep->negated)
    a.parallel.ep_size = a.tp_size.value_or(1);
  a.runtime = "vllm";
  return a;
}

}  // namespace specsim
