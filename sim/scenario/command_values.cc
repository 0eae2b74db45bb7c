#include "scenario/command_values.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "scenario/model_spec.h"
#include "scenario/paths.h"
#include "util/error.h"
#include "util/text.h"

namespace specsim {

int command_int(const std::string& v, const std::string& at) {
  try {
    std::size_t used = 0;
    const int n = std::stoi(v, &used);
    if (used == v.size()) return n;
  } catch (...) {
  }
  throw InputError("'" + v + "' is not an integer", at);
}

double command_double(const std::string& v, const std::string& at) {
  try {
    std::size_t used = 0;
    const double d = std::stod(v, &used);
    if (used == v.size() && std::isfinite(d)) return d;
  } catch (...) {
  }
  throw InputError("'" + v + "' is not a number", at);
}

int command_positive_int(const std::string& v, const std::string& at) {
  const int n = command_int(v, at);
  if (n < 1) throw InputError("'" + v + "' must be at least 1", at);
  return n;
}

double command_fraction(const std::string& v, const std::string& at) {
  const double d = command_double(v, at);
  if (!(d > 0 && d <= 1)) throw InputError("'" + v + "' must be in (0, 1]: a share of the GPU's memory", at);
  return d;
}

long long command_human_int(const std::string& v, const std::string& at) {
  static const std::map<char, double> kMult = {{'k', 1e3},    {'m', 1e6},       {'g', 1e9},
                                               {'K', 1024.0}, {'M', 1048576.0}, {'G', 1073741824.0}};
  if (!v.empty() && kMult.count(v.back())) {
    const double x = command_double(v.substr(0, v.size() - 1), at) * kMult.at(v.back());
    if (x < 1 || x > 1e15) throw InputError("'" + v + "' is out of range", at);
    return static_cast<long long>(x);
  }
  return command_positive_int(v, at);
}

std::string zoo_name_of_hf_id(const std::string& id) {
  static const std::map<std::string, std::string> kZoo = {
      {"deepseek-ai/deepseek-v3", "deepseek-v3"},
      {"deepseek-ai/deepseek-v3-0324", "deepseek-v3"},
      {"deepseek-ai/deepseek-r1", "deepseek-r1"},
      {"moonshotai/kimi-k2-instruct", "kimi-k2"},
      {"moonshotai/kimi-k2-thinking", "kimi-k2-thinking"},
      {"openai/gpt-oss-120b", "gpt-oss-120b"},
      {"openai/gpt-oss-20b", "gpt-oss-20b"},
      {"zai-org/glm-4.7", "glm-4.7"},
      {"meta-llama/llama-3.1-8b-instruct", "llama-3.1-8b"},
      {"meta-llama/meta-llama-3.1-8b-instruct", "llama-3.1-8b"},
      {"meta-llama/llama-3.1-70b-instruct", "llama-3.1-70b"},
      {"meta-llama/meta-llama-3.1-70b-instruct", "llama-3.1-70b"},
      {"meta-llama/llama-3.3-70b-instruct", "llama-3.3-70b"},
      {"deepseek-ai/deepseek-r1-0528", "deepseek-r1"},  // the same architecture and config shapes
      {"qwen/qwen3-8b", "qwen3-8b"},
      {"qwen/qwen3-32b", "qwen3-32b"},
      {"qwen/qwen3-30b-a3b-instruct-2507", "qwen3-30b-a3b"},  // the 2507 instruct releases: same shapes
      {"qwen/qwen3-235b-a22b-instruct-2507", "qwen3-235b-a22b"},
      {"qwen/qwen3-235b-a22b", "qwen3-235b-a22b"},
      {"qwen/qwen3-30b-a3b", "qwen3-30b-a3b"},
      {"meta-llama/llama-2-7b-chat-hf", "llama-2-7b"},
      // later releases of the same architecture and config shapes
      {"deepseek-ai/deepseek-v3.1", "deepseek-v3"},
      {"deepseek-ai/deepseek-v3.1-terminus", "deepseek-v3"},
      {"moonshotai/kimi-k2-instruct-0905", "kimi-k2"},
      {"qwen/qwen3-30b-a3b-thinking-2507", "qwen3-30b-a3b"},
      {"qwen/qwen3-235b-a22b-thinking-2507", "qwen3-235b-a22b"},
  };
  const auto it = kZoo.find(ascii_lower(id));
  return it == kZoo.end() ? "" : it->second;
}

std::string zoo_name_of_model_arg(const std::string& arg) {
  if (arg.empty()) return "";
  if (std::string z = zoo_name_of_hf_id(arg); !z.empty()) return z;
  // a local folder (or an id of another organisation) named like a known id's last part:
  // /models/Llama-3.1-8B-Instruct
  std::string base = arg;
  while (!base.empty() && base.back() == '/') base.pop_back();
  base = base.substr(base.find_last_of('/') == std::string::npos ? 0 : base.find_last_of('/') + 1);
  for (const char* org : {"deepseek-ai", "meta-llama", "qwen", "moonshotai", "openai", "zai-org"})
    if (std::string z = zoo_name_of_hf_id(std::string(org) + "/" + base); !z.empty()) return z;
  const std::string lower = ascii_lower(base);
  for (const auto& z : zoo_names())  // a zoo name itself
    if (lower == z) return z;
  return "";
}

std::optional<QuantizedRelease> quantized_release(const std::string& arg) {
  // longest first: -fp8-dynamic before -fp8
  static const std::pair<const char*, const char*> kSuffix[] = {
      {"-fp8-dynamic", "fp8"}, {"-fp8-block", "fp8"}, {"-fp8", "fp8"},   {"-nvfp4", "nvfp4"}, {"-fp4", "nvfp4"},
      {"-gptq-int4", "int4"},  {"-awq", "int4"},      {"-int4", "int4"}, {"-w4a16", "int4"}};
  std::string base = arg;
  while (!base.empty() && base.back() == '/') base.pop_back();
  const std::string lower = ascii_lower(base);
  for (const auto& [suffix, dtype] : kSuffix) {
    const std::string s = suffix;
    if (lower.size() <= s.size() || lower.compare(lower.size() - s.size(), s.size(), s) != 0) continue;
    const std::string zoo = zoo_name_of_model_arg(base.substr(0, base.size() - s.size()));
    if (zoo.empty()) return std::nullopt;
    return QuantizedRelease{zoo, dtype, base.substr(base.size() - s.size() + 1)};
  }
  return std::nullopt;
}

bool keeps_quantized_weights(const RunArgs& a, const std::string& value, std::vector<std::string>& notes) {
  if (!a.dtype || (*a.dtype != "fp8" && *a.dtype != "nvfp4" && *a.dtype != "int4")) return false;
  const std::string v = ascii_lower(value);
  if (v != "auto" && v != "bfloat16" && v != "bf16" && v != "float16" && v != "fp16" && v != "half") return false;
  notes.push_back("--dtype " + value + ": the activations' dtype; the release's " + *a.dtype + " weights stay");
  return true;
}

bool names_target(const std::string& path, const std::string& name) {
  const std::string target = ascii_lower(name);
  const std::string zoo = zoo_name_of_hf_id(path);
  if (!zoo.empty()) return zoo == target;
  std::string base = ascii_lower(path);
  while (!base.empty() && base.back() == '/') base.pop_back();
  base = base.substr(base.find_last_of('/') == std::string::npos ? 0 : base.find_last_of('/') + 1);
  return !base.empty() && (base.find(target) != std::string::npos || target.find(base) != std::string::npos);
}

void set_pasted_model(RunArgs& a, const std::string& v, std::vector<std::string>& notes) {
  a.model_path = v;
  if (is_file(v) || is_dir(v)) return;
  if (const std::string zoo = zoo_name_of_model_arg(v); !zoo.empty()) {
    a.model_path = zoo;
    notes.push_back(v + " -> zoo " + zoo);
  } else if (const auto q = quantized_release(v)) {
    a.model_path = q->zoo, a.dtype = q->dtype;
    notes.push_back(v + " -> zoo " + q->zoo + " with " + q->dtype + " weights (a quantized release, " + q->suffix +
                    ", of that model)");
  }
}

void set_pasted_draft(RunArgs& a, const std::string& v, const std::string& at) {
  if (is_file(v) || is_dir(v)) {
    a.draft_model_path = v, a.remote_draft.reset();
    return;
  }
  try {
    resolve_model_config(v, at);  // a zoo draft (MODEL/DRAFT)
    a.draft_model_path = v, a.remote_draft.reset();
    return;
  } catch (const InputError&) {
  }
  // A Hugging Face id, or a path (a bare folder name too) on the serving machine: not held here,
  // resolve.cc decides what stands in and says so
  a.remote_draft = v, a.draft_model_path.reset();
}

}  // namespace specsim
