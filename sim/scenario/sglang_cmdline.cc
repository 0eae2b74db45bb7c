#include "scenario/sglang_cmdline.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "util/error.h"

namespace specsim {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

// SGLang flags without a value (store_true) that specsim has no use for.
bool is_switch(const std::string& f) {
  static const char* kSwitches[] = {
      "--trust-remote-code",  "--enable-torch-compile", "--disable-radix-cache",       "--enable-dp-attention",
      "--enable-metrics",     "--log-requests",         "--disable-overlap-schedule",  "--enable-p2p-check",
      "--skip-server-warmup", "--enable-ep-moe",        "--disable-custom-all-reduce", "--enable-mixed-chunk"};
  return std::find(std::begin(kSwitches), std::end(kSwitches), f) != std::end(kSwitches) ||
         f.rfind("--enable-", 0) == 0 || f.rfind("--disable-", 0) == 0;
}

int to_int(const std::string& v, const std::string& flag, const std::string& where) {
  try {
    std::size_t used = 0;
    const int n = std::stoi(v, &used);
    if (used == v.size()) return n;
  } catch (...) {
  }
  throw InputError("'" + v + "' is not an integer", where + ": " + flag);
}

double to_double(const std::string& v, const std::string& flag, const std::string& where) {
  try {
    std::size_t used = 0;
    const double d = std::stod(v, &used);
    if (used == v.size()) return d;
  } catch (...) {
  }
  throw InputError("'" + v + "' is not a number", where + ": " + flag);
}

}  // namespace

std::string zoo_name_of_hf_id(const std::string& id) {
  static const std::map<std::string, std::string> kZoo = {
      {"deepseek-ai/deepseek-v3", "deepseek-v3"},
      {"deepseek-ai/deepseek-v3-0324", "deepseek-v3"},
      {"deepseek-ai/deepseek-r1", "deepseek-r1"},
      {"moonshotai/kimi-k2-instruct", "kimi-k2"},
      {"meta-llama/llama-3.1-8b-instruct", "llama-3.1-8b"},
      {"meta-llama/meta-llama-3.1-8b-instruct", "llama-3.1-8b"},
      {"meta-llama/llama-3.1-70b-instruct", "llama-3.1-70b"},
      {"meta-llama/meta-llama-3.1-70b-instruct", "llama-3.1-70b"},
      {"meta-llama/llama-3.3-70b-instruct", "llama-3.3-70b"},
      {"qwen/qwen3-32b", "qwen3-32b"},
      {"qwen/qwen3-235b-a22b", "qwen3-235b-a22b"},
      {"qwen/qwen3-30b-a3b", "qwen3-30b-a3b"},
      {"meta-llama/llama-2-7b-chat-hf", "llama-2-7b"},
  };
  const auto it = kZoo.find(lower(id));
  return it == kZoo.end() ? "" : it->second;
}

std::vector<std::string> split_command(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  char quote = 0;
  bool any = false;
  for (char c : text) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        cur += c;
    } else if (c == '"' || c == '\'') {
      quote = c, any = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (any || !cur.empty()) out.push_back(cur), cur.clear(), any = false;
    } else {
      cur += c;
    }
  }
  if (any || !cur.empty()) out.push_back(cur);
  return out;
}

SglangCommand args_from_sglang(const std::vector<std::string>& tokens, RunArgs& a, const std::string& where) {
  SglangCommand out;
  std::size_t i = 0;
  while (i < tokens.size() && tokens[i].rfind("--", 0) != 0) ++i;  // python -m sglang.launch_server
  while (i < tokens.size()) {
    std::string flag = tokens[i++], value;
    bool has_value = false;
    if (const auto eq = flag.find('='); eq != std::string::npos)
      value = flag.substr(eq + 1), flag = flag.substr(0, eq), has_value = true;
    if (flag.rfind("--", 0) != 0) throw InputError("'" + flag + "' is not a flag", where);
    auto take = [&]() -> std::string {
      if (has_value) return value;
      if (i >= tokens.size() || tokens[i].rfind("--", 0) == 0) throw InputError("needs a value", where + ": " + flag);
      return tokens[i++];
    };
    auto model = [&](std::optional<std::string>& o) {
      const std::string v = take();
      const std::string zoo = zoo_name_of_hf_id(v);
      if (!o) o = zoo.empty() ? v : zoo;
      if (!zoo.empty()) out.notes.push_back(v + " -> zoo " + zoo);
    };
    if (flag == "--model-path" || flag == "--model")
      model(a.model_path);
    else if (flag == "--speculative-draft-model-path" || flag == "--speculative-draft") {
      const std::string v = take();
      // a known draft of a zoo model is the zoo's own draft, picked with the target
      if (!a.draft_model_path) out.notes.push_back(v + " -> the zoo model's EAGLE-3 draft");
    } else if (flag == "--tp" || flag == "--tp-size") {
      const int n = to_int(take(), flag, where);
      if (!a.tp_size) a.tp_size = n;
    } else if (flag == "--speculative-algorithm") {
      const std::string v = take();
      if (!a.algorithm) a.algorithm = v;
    } else if (flag == "--speculative-num-steps") {
      const int n = to_int(take(), flag, where);
      if (!a.num_steps) a.num_steps = n;
    } else if (flag == "--speculative-eagle-topk") {
      const int n = to_int(take(), flag, where);
      if (!a.topk) a.topk = n;
    } else if (flag == "--speculative-num-draft-tokens") {
      const int n = to_int(take(), flag, where);
      if (!a.num_draft_tokens) a.num_draft_tokens = n;
    } else if (flag == "--cuda-graph-max-bs") {
      const int n = to_int(take(), flag, where);
      if (!a.cuda_graph_max_bs) a.cuda_graph_max_bs = n;
    } else if (flag == "--mem-fraction-static") {
      const double d = to_double(take(), flag, where);
      if (!a.mem_fraction_static) a.mem_fraction_static = d;
    } else if (flag == "--disable-cuda-graph") {
      a.disable_cuda_graph = true;
    } else if (is_switch(flag) && !has_value) {
      out.ignored.push_back(flag);
    } else {  // a flag with a value that does not change the cycle (--port 30000, --host ...)
      const std::string v = has_value || (i < tokens.size() && tokens[i].rfind("--", 0) != 0) ? take() : "";
      out.ignored.push_back(v.empty() ? flag : flag + " " + v);
    }
  }
  if (!a.model_path) throw InputError("the SGLang command has no --model-path", where);
  // SGLang's own adjustment (server_args.py), mirrored with its warning rather than refused.
  if (a.topk == 1 && a.num_steps && a.num_draft_tokens && *a.num_draft_tokens != *a.num_steps + 1) {
    out.notes.push_back(
        "SGLang warns: speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when "
        "speculative_eagle_topk == 1 (" +
        std::to_string(*a.num_draft_tokens) + " -> " + std::to_string(*a.num_steps + 1) + ")");
    a.num_draft_tokens = *a.num_steps + 1;
  }
  return out;
}

}  // namespace specsim
