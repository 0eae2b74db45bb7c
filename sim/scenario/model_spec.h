#pragma once
// A model's shapes as the cost model needs them, read from a Hugging Face config.json.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "scenario/dtype.h"

namespace specsim {

/// Architectures specsim knows how to lay out as SGLang runs them.
enum class Arch { Llama, Qwen3, Qwen3Moe, DeepseekV3, LlamaEagle3, DeepseekV3NextN, GptOss, Glm4Moe, Glm4MoeNextN };

/// Multi-head latent attention (DeepSeek-V3 family).
struct MlaDims {
  int q_lora_rank = 0;   ///< q down-projection rank (0: no q LoRA)
  int kv_lora_rank = 0;  ///< latent KV width (512 for DeepSeek-V3)
  int qk_nope_dim = 0;   ///< per-head q/k width without rotary
  int qk_rope_dim = 0;   ///< per-head rotary width, shared by all heads in the latent cache
  int v_head_dim = 0;    ///< per-head value width
};

/// Mixture of experts.
struct MoeDims {
  int routed_experts = 0;      ///< experts a token can be routed to
  int experts_per_token = 0;   ///< routed experts each token picks (top-k)
  int intermediate = 0;        ///< per-expert MLP width (unsharded)
  int shared_experts = 0;      ///< always-on experts per token
  int first_dense_layers = 0;  ///< leading layers with a dense MLP instead of MoE
  bool fuse_shared = false;    ///< SGLang runs the shared expert as one more expert in the fused MoE
};

struct ModelSpec {
  std::string name;          ///< zoo short name or the config's parent folder name
  std::string architecture;  ///< the HF architectures[0] string
  std::string source;        ///< the config.json path read
  Arch arch = Arch::Llama;
  int hidden = 0;
  int layers = 0;
  int heads = 0;         ///< query heads
  int kv_heads = 0;      ///< key/value heads (GQA)
  int head_dim = 0;      ///< per-head width for GQA models
  int intermediate = 0;  ///< dense MLP width
  int vocab = 0;
  bool has_mla = false;
  bool has_moe = false;
  MlaDims mla;
  MoeDims moe;
  DType weight_dtype = DType::BF16;  ///< dtype of the linear layers' weights
  /// dtype of the routed experts' weights: weight_dtype, unless the checkpoint quantizes only its
  /// experts (Kimi-K2-Thinking's int4, gpt-oss's mxfp4: attention and shared experts stay 16-bit).
  std::optional<DType> expert_weight_dtype;
  /// The routed experts' weight dtype (their own format, else weight_dtype).
  DType experts_dtype() const { return expert_weight_dtype.value_or(weight_dtype); }
  std::string quant_format;    ///< the config's quantization_config in words ("" when none)
  int draft_vocab = 0;         ///< EAGLE-3 drafts: the reduced draft vocabulary
  long long max_position = 0;  ///< max_position_embeddings (0: not given)
  /// Sliding-window attention (gpt-oss): `sliding_layers` of the layers attend to at most the last
  /// `sliding_window` tokens, so their attention reads and their KV cache hold at most that many.
  int sliding_window = 0;
  int sliding_layers = 0;
  bool attention_sinks = false;  ///< gpt-oss: one learned logit per head joins each softmax (not priced: 64 floats)
  bool qk_norm = false;          ///< per-head RMSNorm on q and k (Qwen3; GLM-4.x where use_qk_norm)
  bool is_draft() const { return arch == Arch::LlamaEagle3 || is_nextn(); }
  /// DeepSeek's (or GLM-4.x's) NextN (MTP) layer as SGLang runs it for EAGLE/NEXTN: one MLA (GQA)
  /// + MoE decoder layer plus eh_proj, sharing the target's embedding and LM head.
  bool is_nextn() const { return arch == Arch::DeepseekV3NextN || arch == Arch::Glm4MoeNextN; }
  /// KV tokens a layer reads and caches at `context`: the window for sliding layers.
  double window_context(double context) const {
    return sliding_window > 0 && context > sliding_window ? double(sliding_window) : context;
  }
  /// Parameters in one copy of the model (approximate, for the report).
  double param_count() const;
  /// Of param_count(), the routed experts' parameters (0 without MoE).
  double routed_expert_params() const;
};

/// Kv heads one rank holds at `tp`: its share, or one replicated head when tp exceeds them.
int local_kv_heads(const ModelSpec& m, int tp);

/// KV-cache bytes one rank holds per cached token per layer, at `elem_bytes` per element: MLA
/// caches its latent (kv_lora_rank + qk_rope_dim) on every rank, GQA the keys and values of its
/// local kv heads. The plan's attention reads and the memory fit both use it.
double kv_bytes_per_token_layer(const ModelSpec& m, int tp, double elem_bytes);

/// Reads and parses an HF config.json. `where` names the flag for errors.
ModelSpec model_from_config(const std::string& config_path, const std::string& where);

/// Builds a ModelSpec from a parsed HF config (`source` is recorded; `where` prefixes errors).
ModelSpec model_from_json(const nlohmann::json& cfg, const std::string& source, const std::string& where);

/// Resolves `--model-path`-style input: a config.json file, a folder holding one, or a zoo name
/// under models/ (MODEL or MODEL/DRAFT). Returns the config.json path; InputError naming `flag`
/// otherwise, listing the zoo's names.
std::string resolve_model_config(const std::string& path_or_name, const std::string& flag);

/// The zoo's names, sorted: every models/ folder with a config.json (MODEL) and every draft folder
/// inside one (MODEL/DRAFT).
std::vector<std::string> zoo_names();

/// The zoo's draft config for a target config path inside models/, or "" if none: its NextN
/// layer when `nextn` (EAGLE / NEXTN on DeepSeek) and the model has one, else its EAGLE-3 draft.
std::string zoo_draft_config(const std::string& target_config_path, bool nextn = false);
/// The zoo's EAGLE (EAGLE-1/2 head: one layer on the last hidden state) draft config for a target
/// config path inside models/, or "" if none.
std::string zoo_eagle1_config(const std::string& target_config_path);
/// Whether the zoo holds the target's own multi-token-prediction layer (its nextn/config.json).
bool zoo_has_nextn(const std::string& target_config_path);

}  // namespace specsim
