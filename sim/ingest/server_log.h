#pragma once
// A serving engine's log, SGLang's or vLLM's, told apart by its lines: what every command that
// reads server logs calls (diagnose, ingest, --baseline-from, --accept-from).
#include <string>

#include "ingest/sglang_log.h"

namespace specsim::ingest {

/// An SGLang log (ingest/sglang_log.h), or a vLLM V1 log read into the same shape
/// (ingest/vllm_log.h). InputError as those readers.
SglangLog parse_server_log(const std::string& text, const std::string& file);

/// The engine that wrote a log of `stack` ("sglang", "vllm"), as messages name it: "SGLang", "vLLM".
std::string engine_name(const std::string& stack);

/// The line a log of `stack` names its launch in: "server_args line", "non-default args line".
std::string launch_line_name(const std::string& stack);

}  // namespace specsim::ingest
