#include "ingest/server_log.h"

#include "ingest/vllm_log.h"

namespace specsim::ingest {

SglangLog parse_server_log(const std::string& text, const std::string& file) {
  return is_vllm_log(text) ? parse_vllm_log(text, file) : parse_sglang_log(text, file);
}

std::string engine_name(const std::string& stack) { return stack == "vllm" ? "vLLM" : "SGLang"; }

std::string launch_line_name(const std::string& stack) {
  return stack == "vllm" ? "non-default args line" : "server_args line";
}

}  // namespace specsim::ingest
