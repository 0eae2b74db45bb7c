#include "scenario/sglang_cmdline.h"

#include <algorithm>
#include <functional>
#include <map>

#include "scenario/command_values.h"
#include "util/error.h"

namespace specsim {

namespace {

using Apply = std::function<void(const PastedFlag&, RunArgs&, std::vector<std::string>&, const std::string&)>;

std::string one(const PastedFlag& f) { return f.values.empty() ? std::string() : f.values.back(); }

const std::map<std::string, Apply>& appliers() {
  static const std::map<std::string, Apply> kApply = {
      {"--model-path",
       [](const PastedFlag& f, RunArgs& a, std::vector<std::string>& notes, const std::string&) {
         const std::string v = one(f), zoo = zoo_name_of_hf_id(v);
         a.model_path = zoo.empty() ? v : zoo;
         if (!zoo.empty()) notes.push_back(v + " -> zoo " + zoo);
       }},
      {"--tensor-parallel-size",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string& at) { a.tp_size = command_int(one(f), at); }},
      {"--speculative-algorithm",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string&) { a.algorithm = one(f); }},
      {"--speculative-draft-model-path", [](const PastedFlag& f, RunArgs& a, auto&,
                                            const std::string& at) { set_pasted_draft(a, one(f), at); }},
      {"--speculative-num-steps",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string& at) { a.num_steps = command_int(one(f), at); }},
      {"--speculative-eagle-topk",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string& at) { a.topk = command_int(one(f), at); }},
      {"--speculative-num-draft-tokens", [](const PastedFlag& f, RunArgs& a, auto&,
                                            const std::string& at) { a.num_draft_tokens = command_int(one(f), at); }},
      {"--cuda-graph-max-bs", [](const PastedFlag& f, RunArgs& a, auto&,
                                 const std::string& at) { a.cuda_graph_max_bs = command_int(one(f), at); }},
      {"--cuda-graph-bs",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string& at) {
         a.cuda_graph_bs.clear();
         for (const auto& v : f.values) a.cuda_graph_bs.push_back(command_int(v, at));
       }},
      {"--disable-cuda-graph",
       [](const PastedFlag&, RunArgs& a, auto&, const std::string&) { a.disable_cuda_graph = true; }},
      {"--mem-fraction-static", [](const PastedFlag& f, RunArgs& a, auto&,
                                   const std::string& at) { a.mem_fraction_static = command_double(one(f), at); }},
      {"--dtype",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string&) {
         if (one(f) != "auto") a.dtype = one(f);
       }},
      {"--quantization", [](const PastedFlag& f, RunArgs& a, auto&, const std::string&) { a.quantization = one(f); }},
      {"--kv-cache-dtype",
       [](const PastedFlag& f, RunArgs& a, auto&, const std::string&) {
         if (one(f) != "auto") a.kv_cache_dtype = one(f);
       }},
      {"--disable-custom-all-reduce",
       [](const PastedFlag&, RunArgs& a, auto&, const std::string&) { a.disable_custom_all_reduce = true; }},
      {"--enable-flashinfer-allreduce-fusion",
       [](const PastedFlag&, RunArgs& a, auto&, const std::string&) { a.enable_flashinfer_allreduce_fusion = true; }},
      // Caps: checked against the run's --context-len and --batch-size by the caller.
      {"--context-length",
       [](const PastedFlag& f, RunArgs&, auto&, const std::string& at) { command_int(one(f), at); }},
      {"--max-running-requests",
       [](const PastedFlag& f, RunArgs&, auto&, const std::string& at) { command_int(one(f), at); }},
  };
  return kApply;
}

}  // namespace

const std::vector<std::string>& sglang_applied_flags() {
  static const std::vector<std::string> kFlags = [] {
    std::vector<std::string> v;
    for (const auto& [k, _] : appliers()) v.push_back(k);
    return v;
  }();
  return kFlags;
}

RunArgs args_from_sglang(const CommandFlags& c, std::vector<std::string>& notes) {
  RunArgs a;
  for (const auto& f : c.flags) {
    if (!f.row || f.cls != FlagClass::Modelled) continue;
    const auto it = appliers().find(f.row->flag);
    if (it == appliers().end())
      throw InputError("the table marks " + f.row->flag + " modelled but nothing applies it", "models/stacks");
    it->second(f, a, notes, c.where + ": " + f.given);
  }
  if (!a.model_path) throw InputError("the SGLang command has no --model-path", c.where);
  // No --speculative-algorithm: SGLang decodes plainly (its speculative flags do nothing).
  if (!a.algorithm) a.algorithm = "NONE";
  return a;
}

}  // namespace specsim
