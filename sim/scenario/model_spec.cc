#include "scenario/model_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "scenario/paths.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A positive integer field; `fallback` < 0 means required.
int positive(const json& cfg, const char* key, const std::string& where, int fallback = -1) {
  if (!cfg.contains(key) || cfg[key].is_null()) {
    if (fallback >= 0) return fallback;
    throw InputError(std::string("config lacks '") + key + "'", where + ": " + key);
  }
  const int v = json_int(cfg, key, where);
  // 1<<24 bounds every real dimension by far and keeps products of three dims in double range.
  if (v <= 0 || v > (1 << 24))
    throw InputError(std::string("'") + key + "' must be in 1..16777216", where + ": " + key);
  return v;
}

Arch parse_arch(const json& cfg, const std::string& where) {
  if (!cfg.contains("architectures") || !cfg["architectures"].is_array() || cfg["architectures"].empty() ||
      !cfg["architectures"][0].is_string())
    throw InputError("config lacks 'architectures'", where + ": architectures");
  const std::string a = cfg["architectures"][0].get<std::string>();
  if (a == "LlamaForCausalLM") return Arch::Llama;
  if (a == "Qwen3ForCausalLM") return Arch::Qwen3;
  if (a == "Qwen3MoeForCausalLM") return Arch::Qwen3Moe;
  if (a == "DeepseekV3ForCausalLM") return Arch::DeepseekV3;
  if (a == "LlamaForCausalLMEagle3") return Arch::LlamaEagle3;
  // An EAGLE-1/2 draft (SGLang's and vLLM's LlamaForCausalLMEagle): one Llama layer behind a 2H -> H fc
  // and the target's full-vocab LM head. Costed on the EAGLE-3 draft path: without draft_vocab_size its
  // LM head spans the whole vocab; the 2H-wide qkv input stands in for the 2H -> H fc (same bytes within ~5%).
  if (a == "LlamaForCausalLMEagle") return Arch::LlamaEagle3;
  if (a == "DeepseekV3ForCausalLMNextN") return Arch::DeepseekV3NextN;
  if (a == "GptOssForCausalLM") return Arch::GptOss;
  if (a == "Glm4MoeForCausalLM") return Arch::Glm4Moe;
  if (a == "Glm4MoeForCausalLMNextN") return Arch::Glm4MoeNextN;  // SGLang's name for GLM-4.x's MTP layer
  throw InputError("unknown architecture '" + a +
                       "': supported are LlamaForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM, "
                       "DeepseekV3ForCausalLM, GptOssForCausalLM, Glm4MoeForCausalLM, LlamaForCausalLMEagle3, "
                       "LlamaForCausalLMEagle, DeepseekV3ForCausalLMNextN, Glm4MoeForCausalLMNextN",
                   where + ": architectures");
}

// The checkpoint's format: plain dtype (torch_dtype), or its quantization_config: fp8 (DeepSeek's
// block fp8), compressed-tensors (int4 W4A16 groups, nvfp4, fp8), mxfp4 (gpt-oss), modelopt
// (NVFP4 / FP8). Where the config leaves attention unquantized (compressed-tensors' `ignore`
// naming self_attn, mxfp4's modules_to_not_convert) only the routed experts take the 4-bit format.
struct ConfigFormat {
  DType dense = DType::BF16, experts = DType::BF16;
  std::string words;
};

DType plain_dtype(const json& cfg, const std::string& where) {
  for (const char* key : {"torch_dtype", "dtype"})
    if (cfg.contains(key) && cfg[key].is_string()) return parse_dtype(cfg[key].get<std::string>(), where + ": " + key);
  return DType::BF16;
}

bool mentions(const json& list, const char* what) {
  if (!list.is_array()) return false;
  for (const auto& e : list)
    if (e.is_string() && e.get<std::string>().find(what) != std::string::npos) return true;
  return false;
}

// compressed-tensors: the first config group's weights (num_bits, type).
DType compressed_tensors_dtype(const json& q, const std::string& where) {
  const std::string at = where + ": quantization_config.config_groups";
  if (!q.contains("config_groups") || !q["config_groups"].is_object() || q["config_groups"].empty())
    throw InputError("compressed-tensors config without config_groups", at);
  const json& g = q["config_groups"].front();  // front(): GCC 13 warns on begin().value()
  if (!g.is_object() || !g.contains("weights") || !g["weights"].is_object())
    throw InputError("config group without weights", at);
  const json& w = g["weights"];
  const int bits = w.contains("num_bits") && w["num_bits"].is_number_integer() ? w["num_bits"].get<int>() : 0;
  const std::string type = w.contains("type") && w["type"].is_string() ? w["type"].get<std::string>() : "";
  const bool acts = g.contains("input_activations") && !g["input_activations"].is_null();
  if (bits == 4 && type == "int" && !acts) return DType::INT4;
  if (bits == 4 && type == "float") return DType::NVFP4;
  if (bits == 8 && type == "float") return DType::FP8;
  throw InputError("not modelled: compressed-tensors weights of " + std::to_string(bits) + " bits, type '" + type +
                       "'" + (acts ? " with quantized activations" : "") +
                       "; modelled are int4 W4A16, nvfp4 and fp8 (or give --dtype)",
                   at);
}

ConfigFormat config_format(const json& cfg, const std::string& where) {
  ConfigFormat f;
  f.dense = f.experts = plain_dtype(cfg, where);
  if (!cfg.contains("quantization_config") || !cfg["quantization_config"].is_object()) return f;
  const auto& q = cfg["quantization_config"];
  const std::string method = q.contains("quant_method") && q["quant_method"].is_string()
                                 ? q["quant_method"].get<std::string>()
                                 : std::string();
  const std::string at = where + ": quantization_config.quant_method";
  if (method == "fp8") {
    f.dense = f.experts = DType::FP8;
    f.words = "fp8";  // DeepSeek's 128x128 block scales
  } else if (method == "compressed-tensors") {
    const DType d = compressed_tensors_dtype(q, where);
    f.experts = d;
    if (!mentions(q.value("ignore", json::array()), "self_attn")) f.dense = d;
    f.words =
        std::string("compressed-tensors ") + std::string(dtype_name(d)) +
        (f.dense == d ? "" : " (routed experts; attention and shared layers " + std::string(dtype_name(f.dense)) + ")");
  } else if (method == "mxfp4") {
    f.experts = DType::MXFP4;
    if (!mentions(q.value("modules_to_not_convert", json::array()), "self_attn")) f.dense = DType::MXFP4;
    f.words = std::string("mxfp4") +
              (f.dense == DType::MXFP4 ? "" : " (experts; attention " + std::string(dtype_name(f.dense)) + ")");
  } else if (method == "modelopt" || method == "modelopt_fp4") {
    const std::string algo =
        q.contains("quant_algo") && q["quant_algo"].is_string() ? q["quant_algo"].get<std::string>() : "";
    if (algo == "NVFP4" || method == "modelopt_fp4")
      f.dense = f.experts = DType::NVFP4;
    else if (algo == "FP8")
      f.dense = f.experts = DType::FP8;
    else
      throw InputError("not modelled: modelopt quant_algo '" + algo + "'; modelled are NVFP4 and FP8",
                       where + ": quantization_config.quant_algo");
    f.words = "modelopt " + std::string(dtype_name(f.dense));
  } else if (q.contains("quant_method")) {
    throw InputError("not modelled: quantization '" + json_excerpt(q["quant_method"]) +
                         "'; modelled are fp8, compressed-tensors (int4, nvfp4, fp8), mxfp4 and modelopt (or give "
                         "--dtype bf16|fp8)",
                     at);
  }
  return f;
}

// gpt-oss: which layers attend through a sliding window (layer_types, else every other layer from
// the first, as transformers' GptOssConfig defaults) and the window's width.
void read_sliding_window(const json& cfg, ModelSpec& m, const std::string& where) {
  if (!cfg.contains("sliding_window") || cfg["sliding_window"].is_null()) return;
  m.sliding_window = positive(cfg, "sliding_window", where);
  if (cfg.contains("layer_types") && !cfg["layer_types"].is_null()) {
    const json& types = cfg["layer_types"];
    if (!types.is_array() || types.size() != static_cast<std::size_t>(m.layers))
      throw InputError("layer_types must list one type per layer (num_hidden_layers " + std::to_string(m.layers) + ")",
                       where + ": layer_types");
    for (const auto& t : types) {
      const std::string v = t.is_string() ? t.get<std::string>() : std::string();
      if (v == "sliding_attention")
        ++m.sliding_layers;
      else if (v != "full_attention")
        throw InputError("layer_types holds '" + json_excerpt(t) + "': use sliding_attention or full_attention",
                         where + ": layer_types");
    }
  } else {
    m.sliding_layers = (m.layers + 1) / 2;
  }
}

// DeepSeek-style MoE fields (DeepSeek-V3, Kimi-K2, GLM-4.x): routed and shared experts, leading dense layers.
void read_deepseek_moe(const json& cfg, ModelSpec& m, const std::string& where) {
  m.has_moe = true;
  m.moe.routed_experts = positive(cfg, "n_routed_experts", where);
  m.moe.experts_per_token = positive(cfg, "num_experts_per_tok", where);
  m.moe.intermediate = positive(cfg, "moe_intermediate_size", where);
  m.moe.shared_experts = cfg.contains("n_shared_experts") ? json_int(cfg, "n_shared_experts", where) : 0;
  m.moe.first_dense_layers = cfg.contains("first_k_dense_replace") ? json_int(cfg, "first_k_dense_replace", where) : 0;
  if (m.moe.shared_experts < 0 || m.moe.first_dense_layers < 0 || m.moe.first_dense_layers > m.layers)
    throw InputError("n_shared_experts / first_k_dense_replace out of range", where + ": first_k_dense_replace");
  if (cfg.contains("moe_layer_freq") && json_int(cfg, "moe_layer_freq", where) != 1)
    throw InputError("only moe_layer_freq 1 is modelled", where + ": moe_layer_freq");
}

std::string model_name(const std::string& config_path) {
  // A pipe (/dev/fd/N -> "pipe:[...]") has no canonical path: its name is the path as given.
  std::error_code ec;
  fs::path p = fs::weakly_canonical(config_path, ec);
  if (ec) p = config_path;
  const fs::path zoo = fs::weakly_canonical(models_dir());
  const auto rel = p.parent_path().lexically_relative(zoo);
  if (!rel.empty() && *rel.begin() != "..") return rel.generic_string();
  if (p.filename() == "config.json") return p.parent_path().filename().string();
  return p.stem().string();
}

}  // namespace

double ModelSpec::param_count() const {
  const double h = hidden;
  double attn;
  if (has_mla) {
    const double qk = mla.qk_nope_dim + mla.qk_rope_dim;
    attn = h * (mla.q_lora_rank + mla.kv_lora_rank + mla.qk_rope_dim) + double(mla.q_lora_rank) * heads * qk +
           double(mla.kv_lora_rank) * heads * (mla.qk_nope_dim + mla.v_head_dim) + double(heads) * mla.v_head_dim * h;
  } else {
    attn = h * (heads + 2.0 * kv_heads) * head_dim + double(heads) * head_dim * h;
  }
  const double dense_mlp = 3.0 * h * intermediate;
  const double expert = 3.0 * h * moe.intermediate;
  const int moe_layers = has_moe ? layers - moe.first_dense_layers : 0;
  const double mlp =
      double(layers - moe_layers) * dense_mlp + double(moe_layers) * (moe.routed_experts + moe.shared_experts) * expert;
  const double emb = 2.0 * h * vocab;
  return layers * attn + mlp + emb;
}

double ModelSpec::routed_expert_params() const {
  if (!has_moe) return 0;
  return double(layers - moe.first_dense_layers) * moe.routed_experts * 3.0 * hidden * moe.intermediate;
}

ModelSpec model_from_config(const std::string& path, const std::string& where_flag) {
  return model_from_json(read_json_file(path), path, where_flag + " " + path);
}

ModelSpec model_from_json(const json& cfg, const std::string& path, const std::string& where) {
  if (!cfg.is_object()) throw InputError("config.json must hold a JSON object", where);
  ModelSpec m;
  m.source = path;
  m.name = path.empty() ? std::string("model") : model_name(path);
  m.arch = parse_arch(cfg, where);
  m.architecture = cfg["architectures"][0].get<std::string>();
  m.hidden = positive(cfg, "hidden_size", where);
  m.layers = positive(cfg, "num_hidden_layers", where);
  m.heads = positive(cfg, "num_attention_heads", where);
  m.kv_heads = positive(cfg, "num_key_value_heads", where, m.heads);
  m.vocab = positive(cfg, "vocab_size", where);
  m.intermediate = positive(cfg, "intermediate_size", where);
  const ConfigFormat format = config_format(cfg, where);
  m.weight_dtype = format.dense;
  if (format.experts != format.dense) m.expert_weight_dtype = format.experts;
  m.quant_format = format.words;
  if (cfg.contains("max_position_embeddings")) m.max_position = positive(cfg, "max_position_embeddings", where);
  m.qk_norm = m.arch == Arch::Qwen3 || m.arch == Arch::Qwen3Moe ||
              ((m.arch == Arch::Glm4Moe || m.arch == Arch::Glm4MoeNextN) && cfg.contains("use_qk_norm") &&
               cfg["use_qk_norm"].is_boolean() && cfg["use_qk_norm"].get<bool>());
  if (m.arch != Arch::DeepseekV3 && m.arch != Arch::DeepseekV3NextN) {
    if (!cfg.contains("head_dim") && m.hidden % m.heads != 0)
      throw InputError("hidden_size is not a multiple of num_attention_heads and head_dim is missing",
                       where + ": head_dim");
    m.head_dim = positive(cfg, "head_dim", where, m.hidden / m.heads);
    if (m.heads % m.kv_heads != 0)
      throw InputError("num_attention_heads must be a multiple of num_key_value_heads",
                       where + ": num_key_value_heads");
  }
  switch (m.arch) {
    case Arch::Llama:
    case Arch::Qwen3: break;
    case Arch::LlamaEagle3:
      m.draft_vocab = positive(cfg, "draft_vocab_size", where, m.vocab);
      if (m.layers != 1)
        throw InputError("EAGLE-3 drafts have exactly one decoder layer", where + ": num_hidden_layers");
      break;
    case Arch::Qwen3Moe: {
      m.has_moe = true;
      m.moe.routed_experts = positive(cfg, "num_experts", where);
      m.moe.experts_per_token = positive(cfg, "num_experts_per_tok", where);
      m.moe.intermediate = positive(cfg, "moe_intermediate_size", where);
      if (cfg.contains("decoder_sparse_step") && json_int(cfg, "decoder_sparse_step", where) != 1)
        throw InputError("only decoder_sparse_step 1 (every layer MoE) is modelled", where + ": decoder_sparse_step");
      if (cfg.contains("mlp_only_layers") && cfg["mlp_only_layers"].is_array() && !cfg["mlp_only_layers"].empty())
        throw InputError("mlp_only_layers is not modelled: every layer must be MoE", where + ": mlp_only_layers");
      break;
    }
    case Arch::GptOss: {
      // 128 (120b) or 32 (20b) experts of intermediate_size, top-4, in every layer; no shared
      // expert, no dense layer (transformers' GptOssConfig: num_local_experts, num_experts_per_tok).
      m.has_moe = true;
      m.moe.routed_experts = positive(cfg, "num_local_experts", where);
      m.moe.experts_per_token =
          positive(cfg, "num_experts_per_tok", where, positive(cfg, "experts_per_token", where, 4));
      m.moe.intermediate = m.intermediate;
      read_sliding_window(cfg, m, where);
      m.attention_sinks = true;
      break;
    }
    case Arch::Glm4MoeNextN:
    case Arch::Glm4Moe: {
      // GQA attention (partial rotary, qkv bias) and DeepSeek-style MoE: routed + one shared expert,
      // first_k_dense_replace dense layers. SGLang v0.5.2 fuses a single shared expert into the
      // routed MoE on CUDA GPUs (glm4_moe.py determine_num_fused_shared_experts; not on ROCm).
      read_deepseek_moe(cfg, m, where);
      m.moe.fuse_shared = m.moe.shared_experts == 1;
      if (m.arch == Arch::Glm4MoeNextN) {
        if (m.layers != 1)
          throw InputError("a NextN draft has exactly one decoder layer", where + ": num_hidden_layers");
        m.moe.first_dense_layers = 0;
        m.draft_vocab = m.vocab;
      }
      break;
    }
    case Arch::DeepseekV3NextN:
    case Arch::DeepseekV3: {
      m.has_mla = m.has_moe = true;
      m.mla.q_lora_rank = positive(cfg, "q_lora_rank", where, 0);
      m.mla.kv_lora_rank = positive(cfg, "kv_lora_rank", where);
      m.mla.qk_nope_dim = positive(cfg, "qk_nope_head_dim", where);
      m.mla.qk_rope_dim = positive(cfg, "qk_rope_head_dim", where);
      m.mla.v_head_dim = positive(cfg, "v_head_dim", where);
      m.head_dim = m.mla.qk_nope_dim + m.mla.qk_rope_dim;
      read_deepseek_moe(cfg, m, where);
      // SGLang fuses the shared expert into the routed MoE only for 256 routed experts + 1 shared
      // (DeepSeek-V3/R1); Kimi-K2 (384) runs it as a separate TP-sharded MLP.
      m.moe.fuse_shared = m.moe.routed_experts == 256 && m.moe.shared_experts == 1;
      if (m.arch == Arch::DeepseekV3NextN) {
        // SGLang builds the NextN layer as a MoE layer (is_nextn) and samples over the full vocab.
        if (m.layers != 1)
          throw InputError("a NextN draft has exactly one decoder layer", where + ": num_hidden_layers");
        m.moe.first_dense_layers = 0;
        m.draft_vocab = m.vocab;
      }
      break;
    }
  }
  if (m.has_moe && m.moe.experts_per_token > m.moe.routed_experts)
    throw InputError("num_experts_per_tok exceeds the number of experts", where + ": num_experts_per_tok");
  return m;
}

int local_kv_heads(const ModelSpec& m, int tp) { return std::max(1, m.kv_heads / tp); }

double kv_bytes_per_token_layer(const ModelSpec& m, int tp, double elem_bytes) {
  if (m.has_mla) return (m.mla.kv_lora_rank + m.mla.qk_rope_dim) * elem_bytes;
  return 2.0 * local_kv_heads(m, tp) * m.head_dim * elem_bytes;
}

std::vector<std::string> zoo_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& model : fs::directory_iterator(models_dir(), ec)) {
    if (!is_file((model.path() / "config.json").string())) continue;  // hardware/, nccl/, runtime/, ...
    const std::string name = model.path().filename().string();
    names.push_back(name);
    for (const auto& draft : fs::directory_iterator(model.path(), ec))
      if (is_file((draft.path() / "config.json").string()))
        names.push_back(name + "/" + draft.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string resolve_model_config(const std::string& in, const std::string& flag) {
  if (in.empty()) throw InputError("empty model path", flag);
  if (is_input_file(in)) return in;
  if (is_dir(in)) {
    const std::string c = (fs::path(in) / "config.json").string();
    if (is_file(c)) return c;
    throw InputError("folder " + in + " holds no config.json", flag);
  }
  // A zoo name: MODEL, or MODEL/DRAFT for one of its drafts (llama-3.1-8b/eagle3); never a path
  // that climbs out of models/.
  const auto slashes = std::count(in.begin(), in.end(), '/');
  const bool zoo_shaped = slashes <= 1 && in.front() != '/' && in.back() != '/' && in.find("..") == std::string::npos;
  const std::string zoo = (fs::path(models_dir()) / in / "config.json").string();
  if (zoo_shaped && is_file(zoo)) return zoo;
  throw InputError(fmt::format("'{}' is neither a config.json, a folder holding one, nor a zoo model or draft ({})", in,
                               fmt::join(zoo_names(), ", ")),
                   flag);
}

bool zoo_has_nextn(const std::string& target_config_path) {
  return is_file((fs::path(target_config_path).parent_path() / "nextn" / "config.json").string());
}

std::string zoo_draft_config(const std::string& target_config_path, bool nextn) {
  const fs::path dir = fs::path(target_config_path).parent_path();
  if (nextn) {  // SGLang's EAGLE / NEXTN on DeepSeek runs the model's own MTP layer
    const std::string c = (dir / "nextn" / "config.json").string();
    if (is_file(c)) return c;
  }
  const std::string c = (dir / "eagle3" / "config.json").string();
  return is_file(c) ? c : std::string();
}

std::string zoo_eagle1_config(const std::string& target_config_path) {
  const std::string c = (fs::path(target_config_path).parent_path() / "eagle1" / "config.json").string();
  return is_file(c) ? c : std::string();
}

}  // namespace specsim
