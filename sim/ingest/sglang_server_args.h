#pragma once
// The `server_args=ServerArgs(...)` line an SGLang server logs at startup: the Python repr of its
// ServerArgs dataclass (python/sglang/srt/server_args.py in sgl-project/sglang), one line of
// `key=value` pairs whose values are Python literals ('str', None, True, 8, 0.85, [1, 2], {...}).
// The keys that shape the decode cycle are read; every other key is kept as its raw text.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace specsim::ingest {

/// What specsim takes from the server_args line. An absent key keeps SGLang's default; a key
/// logged as None is nullopt.
struct ServerArgs {
  std::size_t line = 0;    ///< 1-based line of the log
  std::string model_path;  ///< as given (a Hugging Face id or a folder)
  std::optional<std::string> served_model_name;
  int tp_size = 1, dp_size = 1;
  std::optional<std::string> speculative_algorithm;  ///< EAGLE, EAGLE3, NEXTN, ...; nullopt: off
  std::optional<std::string> speculative_draft_model_path;
  std::optional<int> speculative_num_steps, speculative_eagle_topk, speculative_num_draft_tokens;
  std::optional<int> cuda_graph_max_bs, max_running_requests;
  bool disable_cuda_graph = false;
  bool disable_custom_all_reduce = false;
  bool enable_dp_attention = false;
  bool disable_overlap_schedule = false;
  bool enable_torch_compile = false;
  std::optional<std::string> attention_backend;
  std::string dtype = "auto";               ///< 'auto', 'bfloat16', 'float16', ...
  std::optional<std::string> quantization;  ///< None, 'fp8', 'w8a8_int8', ...
  std::string kv_cache_dtype = "auto";
  std::optional<double> mem_fraction_static;
  /// Every key of the line with its value's text as logged (read keys included).
  std::map<std::string, std::string> raw;
  /// "sglang", or "vllm" for a vLLM log's `non-default args` line (ingest/vllm_log.h), whose
  /// fields above are filled as SGLang names them and whose launch is also `vllm_command`.
  std::string stack = "sglang";
  /// vLLM: the launch's arguments rebuilt as `vllm serve` flags, one group of tokens an argument
  /// (`--tensor-parallel-size 8`, `--enforce-eager`), read as a pasted command's are; the release
  /// the log names ("0.11.0"), "" when it names none.
  std::vector<std::vector<std::string>> vllm_flags;
  std::string vllm_version;
  /// True when speculation is on: an algorithm other than None.
  bool speculative() const { return speculative_algorithm.has_value(); }
};

/// True when the line holds `server_args=ServerArgs(`.
bool is_server_args_line(std::string_view line);

/// Reads one server_args line (`[time] server_args=ServerArgs(k=v, ...)`). InputError
/// `what (FILE:LINE)` naming the key on a bad value of a key that is read, or on a truncated line.
ServerArgs parse_server_args(std::string_view line, const std::string& file, std::size_t line_no);

}  // namespace specsim::ingest
