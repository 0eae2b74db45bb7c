#pragma once
// vLLM V1 server logs (docs/sources.md#S-vllm-log), read into the shape of an SGLang log so that
// every command reading server logs reads them:
//   (APIServer pid=1) INFO 10-06 15:56:26 [utils.py:233] non-default args: {'model': ..., 'tensor_parallel_size': 8,
//     'speculative_config': {'method': 'eagle3', 'model': ..., 'num_speculative_tokens': 3}}
//   ... [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 120.3 tokens/s,
//     Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.3%, Prefix cache hit rate: 0.0%
//   ... [metrics.py:96] SpecDecoding metrics: Mean acceptance length: 2.85, Accepted throughput: ..., ...
// Each stats line is one decode line: its generation throughput over the logging interval (10 s by
// default), its Running count as #running-req, and the mean acceptance length of the SpecDecoding
// line logged right after it. The `non-default args` line is the launch, rebuilt as the `vllm serve`
// command it came from; the release is the one the log names.
#include <string>
#include <string_view>

#include "ingest/sglang_log.h"

namespace specsim::ingest {

/// True when `text` holds a vLLM stats line (`Avg generation throughput:`) and no SGLang decode line.
bool is_vllm_log(std::string_view text);

/// Parses a vLLM log. Of a data-parallel server's engines, the first one the log shows decoding
/// is read (SglangLog::engines counts them). InputError `what (FILE:LINE)` on a stats or
/// SpecDecoding line with a bad field, a V0-engine log (its stats lines count Swapped and Pending
/// requests; its speculation logs `Speculative metrics`), or no stats line at a running request.
SglangLog parse_vllm_log(const std::string& text, const std::string& file);

}  // namespace specsim::ingest
