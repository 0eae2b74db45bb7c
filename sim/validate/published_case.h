#pragma once
// One public measurement of speculative decoding (traces/published/*.json): the settings the
// source states and the figures it reports, `null` where the source is silent.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace specsim {

struct PublishedCase {
  std::string id, file;                        ///< `file`: as named in errors (the file name)
  bool held_out = false;                       ///< role "held_out" (else "fit")
  std::string serving;                         ///< "SGLang", "vLLM"
  std::optional<std::string> serving_version;  ///< the version or date the source implies
  /// The runtime profile of that release where it is not the stack's current one (vllm-0.10).
  std::optional<std::string> runtime_profile;
  std::string algorithm;  ///< as the source writes it
  std::optional<std::string> zoo_model, zoo_gpu, zoo_topology;
  std::optional<std::string> zoo_draft;  ///< the draft's zoo config when the target's own is not it
  std::optional<std::string> draft;      ///< the draft as the source names it (two drafts may share a zoo config)
  std::optional<std::string> dtype;  ///< the weights' dtype when the source ran another checkpoint than the config's
  /// The command's --quantization and --kv-cache-dtype, as the stack takes them.
  std::optional<std::string> quantization, kv_cache_dtype;
  /// False where the command turns the stack's custom all-reduce off (--disable-custom-all-reduce).
  bool custom_all_reduce = true;
  std::optional<int> tp, batch_size, num_steps, topk, num_draft_tokens;
  /// The parallel layout beyond one TP group, as the command gives it (optional fields; absent:
  /// one node, one TP group): nodes, pipeline stages, DP attention, expert parallelism.
  std::optional<int> nnodes, pp_size, dp_size, ep_size;
  std::optional<int> context_len;  ///< tokens a decode step reads (optional; absent: run's default)
  bool enable_dp_attention = false;
  std::optional<std::string> moe_a2a_backend, deepep_mode;
  std::optional<double> baseline_tok_s, spec_tok_s, accept_length, speedup_stated;
  std::string url;
  /// Fields the source does not state but the case fills in anyway: field name -> why (printed by validate).
  std::vector<std::pair<std::string, std::string>> assumptions;
  /// The measured speedup: spec / baseline when both are given, else the stated one.
  std::optional<double> speedup() const;
};

/// Reads one case; InputError naming file:field on a missing or malformed field.
PublishedCase load_published_case(const std::string& path);

/// The same for a case already parsed; `file` names it in errors.
PublishedCase published_case_from_json(const nlohmann::json& j, const std::string& file);

/// Every *.json in `dir`, sorted by name (README and others skipped); InputError when none.
std::vector<PublishedCase> load_published_set(const std::string& dir, const std::string& flag);

}  // namespace specsim
