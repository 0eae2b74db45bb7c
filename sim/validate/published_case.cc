#include "validate/published_case.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "scenario/paths.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

using nlohmann::json;

namespace {

const json& need(const json& j, const char* key, const std::string& f) {
  if (!j.contains(key)) throw InputError("missing field", f + key);
  return j.at(key);
}

std::string str(const json& j, const char* key, const std::string& f) {
  const json& v = need(j, key, f);
  if (!v.is_string() || v.get<std::string>().empty()) throw InputError("expected a non-empty string", f + key);
  return v.get<std::string>();
}

std::optional<std::string> opt_string(const json& j, const char* key, const std::string& f) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  if (!j.at(key).is_string() || j.at(key).get<std::string>().empty())
    throw InputError("expected a non-empty string or null", f + key);
  return j.at(key).get<std::string>();
}

std::optional<int> opt_count(const json& j, const char* key, const std::string& f) {
  const json& v = need(j, key, f);
  if (v.is_null()) return std::nullopt;
  if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 1 << 20)
    throw InputError("expected a positive integer or null", f + key);
  return v.get<int>();
}

// A count that may be left out altogether (the layout fields): absent or null -> nullopt.
std::optional<int> opt_count_absent(const json& j, const char* key, const std::string& f) {
  if (!j.contains(key)) return std::nullopt;
  return opt_count(j, key, f);
}

std::optional<double> opt_positive(const json& j, const char* key, const std::string& f, bool required = true) {
  if (!required && !j.contains(key)) return std::nullopt;
  const json& v = need(j, key, f);
  if (v.is_null()) return std::nullopt;
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0)
    throw InputError("expected a positive number or null", f + key);
  return v.get<double>();
}

}  // namespace

std::optional<double> PublishedCase::speedup() const {
  if (baseline_tok_s && spec_tok_s) return *spec_tok_s / *baseline_tok_s;
  return speedup_stated;
}

PublishedCase load_published_case(const std::string& path) {
  return published_case_from_json(read_json_file(path), std::filesystem::path(path).filename().string());
}

PublishedCase published_case_from_json(const json& j, const std::string& file) {
  PublishedCase c;
  c.file = file;
  const std::string f = c.file + ":";
  if (!j.is_object()) throw InputError("a case must be a JSON object", f + "(top)");
  c.id = str(j, "id", f);
  const std::string role = str(j, "role", f);
  if (role != "fit" && role != "held_out") throw InputError("role must be fit or held_out", f + "role");
  c.held_out = role == "held_out";
  c.serving = str(j, "serving", f);
  if (c.serving != "SGLang" && c.serving != "vLLM") throw InputError("serving must be SGLang or vLLM", f + "serving");
  c.serving_version = opt_string(j, "serving_version", f);
  c.runtime_profile = opt_string(j, "runtime_profile", f);
  if (c.runtime_profile && (c.runtime_profile->rfind(c.serving == "vLLM" ? "vllm" : "sglang", 0) != 0 ||
                            !is_file(models_dir() + "/runtime/" + *c.runtime_profile + ".json")))
    throw InputError("'" + *c.runtime_profile + "' is not a runtime profile of " + c.serving + "'s in models/runtime/",
                     f + "runtime_profile");
  c.algorithm = str(j, "speculative_algorithm", f);
  need(j, "zoo_model", f), need(j, "zoo_gpu", f);
  c.zoo_model = opt_string(j, "zoo_model", f);
  c.zoo_gpu = opt_string(j, "zoo_gpu", f);
  c.zoo_topology = opt_string(j, "zoo_topology", f);
  c.zoo_draft = opt_string(j, "zoo_draft", f);
  c.draft = opt_string(j, "draft", f);
  c.dtype = opt_string(j, "dtype", f);
  c.quantization = opt_string(j, "quantization", f);
  c.kv_cache_dtype = opt_string(j, "kv_cache_dtype", f);
  if (j.contains("custom_all_reduce")) {
    if (!j.at("custom_all_reduce").is_boolean())
      throw InputError("expected true or false (false: the command has --disable-custom-all-reduce)",
                       f + "custom_all_reduce");
    c.custom_all_reduce = j.at("custom_all_reduce").get<bool>();
  }
  c.tp = opt_count(j, "tp", f);
  c.batch_size = opt_count(j, "batch_size", f);
  c.num_steps = opt_count(j, "speculative_num_steps", f);
  c.topk = opt_count(j, "speculative_eagle_topk", f);
  c.num_draft_tokens = opt_count(j, "speculative_num_draft_tokens", f);
  c.nnodes = opt_count_absent(j, "nnodes", f);
  c.context_len = opt_count_absent(j, "context_len", f);
  c.pp_size = opt_count_absent(j, "pp_size", f);
  c.dp_size = opt_count_absent(j, "dp_size", f);
  c.ep_size = opt_count_absent(j, "ep_size", f);
  if (j.contains("enable_dp_attention")) {
    if (!j.at("enable_dp_attention").is_boolean())
      throw InputError("expected true or false (true: the command has --enable-dp-attention)",
                       f + "enable_dp_attention");
    c.enable_dp_attention = j.at("enable_dp_attention").get<bool>();
  }
  c.moe_a2a_backend = opt_string(j, "moe_a2a_backend", f);
  c.deepep_mode = opt_string(j, "deepep_mode", f);
  c.baseline_tok_s = opt_positive(j, "baseline_tok_s", f);
  c.spec_tok_s = opt_positive(j, "spec_tok_s", f);
  c.accept_length = opt_positive(j, "accept_length", f);
  c.speedup_stated = opt_positive(j, "speedup_stated", f);
  const json& src = need(j, "source", f);
  if (!src.is_object()) throw InputError("expected an object", f + "source");
  c.url = str(src, "url", f + "source.");
  if (j.contains("assumptions") && !j.at("assumptions").is_null()) {
    const json& a = j.at("assumptions");
    if (!a.is_object()) throw InputError("expected an object of field: reason", f + "assumptions");
    for (const auto& [field, why] : a.items()) {
      if (!j.contains(field)) throw InputError("assumes a field the case does not have", f + "assumptions." + field);
      if (!why.is_string() || why.get<std::string>().empty())
        throw InputError("expected a non-empty reason", f + "assumptions." + field);
      c.assumptions.emplace_back(field, why.get<std::string>());
    }
  }
  return c;
}

std::vector<PublishedCase> load_published_set(const std::string& dir, const std::string& flag) {
  if (is_file(dir)) throw InputError(dir + " is a file: give the folder of case files (traces/published)", flag);
  if (!is_dir(dir)) throw InputError("no such folder: " + dir, flag);
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw InputError("no *.json cases in " + dir, flag);
  std::vector<PublishedCase> out;
  for (const auto& p : files) out.push_back(load_published_case(p));
  return out;
}

}  // namespace specsim
