#pragma once
// SGLang server logs: the periodic decode lines, in both forms (docs/sources.md#S-sglang-decode-log):
//   Decode batch, #running-req: 1, #token: 186, token usage: 0.00, accept len: 1.95,
//     accept rate: 0.49, cuda graph: True, gen throughput (token/s): 178.86, #queue-req: 0
//   Decode batch. #running-req: 1, #token: 186, token usage: 0.00, gen throughput (token/s): 178.86, ...
// and the keys newer SGLang logs instead of `#token`: `#gpu-token` (with HiSparse, sgl-project/sglang
// #22331), `#full token` (models with sliding-window or linear-attention layers); `Decode batch [N],`
// when SGLANG_LOG_FORWARD_ITERS is set (python/sglang/srt/managers/scheduler_metrics_mixin.py).
// Each line averages the decode steps since the previous one (SGLang logs every N steps).
// The startup `server_args=ServerArgs(...)` line, when present, says how the server was launched.
#include <optional>
#include <string>
#include <vector>

#include "ingest/log_timestamp.h"
#include "ingest/sglang_server_args.h"

namespace specsim::ingest {

struct DecodeLine {
  std::size_t line = 0;
  int running_req = 0;
  long long tokens = 0;               ///< KV tokens of the running requests; 0 when the line gives none
  std::string tokens_key;             ///< the field `tokens` came from (#token, #gpu-token, #full token); "" when none
  std::optional<double> accept_len;   ///< speculation on: accepted draft tokens per verify + 1
  std::optional<double> accept_rate;  ///< newer SGLang only
  std::optional<bool> cuda_graph;     ///< newer SGLang only
  double gen_tok_s = 0;               ///< gen throughput (token/s) over the interval
  std::optional<LogTimestamp> time;   ///< the line's timestamp, when it has one
  /// Seconds since the previous decode line of the same launch, when both are timestamped: the
  /// interval the line's gen throughput averages over.
  std::optional<double> since_previous_s;
  bool first_of_launch = false;  ///< no decode line of its launch above it: its interval began before the log
  /// Index in SglangLog::server_args of the launch this line belongs to (the last server_args
  /// line above it); nullopt when none is above it.
  std::optional<std::size_t> server_args_index;
  /// The `DPn` rank tag of a DP-attention server's line (ingest/sglang_rank_tag.h): that rank's
  /// own batch and throughput; nullopt on a one-scheduler server's line.
  std::optional<int> dp_rank;
  std::vector<std::string> keys;  ///< the line's field names in order, read or not
  /// vLLM: the interval's prompt throughput (tokens/s prefilled); nullopt on SGLang's lines.
  std::optional<double> prompt_tok_s;
  /// Why the line's gen throughput does not measure decoding at its batch size, "" when it does:
  /// on a vLLM log, a Running count other than the previous line's (the batch changed inside the
  /// interval). Left out of the throughput figures, said; its accept len counts.
  std::string unsteady;
};

/// The decode lines at one #running-req: what `ingest --sglang-log` lists per batch size.
struct BatchFigures {
  int running_req = 0;
  std::size_t lines = 0;             ///< with a positive gen throughput, idle gaps left out: the median's
  std::size_t idle_lines = 0;        ///< idle gaps left out of the median (ingest/sglang_idle_gap.h)
  double median_tok_s = 0;           ///< 0 when no line is left (lines 0)
  std::optional<double> accept_len;  ///< mean of the lines' logged accept len; nullopt when none logs one
  std::size_t unsteady_lines = 0;    ///< vLLM: lines whose batch changed in their interval, left out too
};

/// A server log read for its decode figures: SGLang's, or a vLLM V1 log read by ingest/vllm_log.h
/// into the same shape (its periodic stats lines as decode lines, its launch as a ServerArgs).
struct SglangLog {
  std::string stack = "sglang";  ///< "sglang" or "vllm"
  std::vector<DecodeLine> decode;
  /// The server_args lines in order (one per server start; a restarted server logs another).
  std::vector<ServerArgs> server_args;
  std::size_t lines = 0, prefill_lines = 0;
  std::size_t unknown_lines = 0;  ///< anything else (requests, warnings, tracebacks): skipped
  std::size_t idle_lines = 0;     ///< vLLM stats lines at Running 0 (nothing decoding): not decode lines
  /// vLLM: the engines whose stats lines the log holds (one per data-parallel rank); the first
  /// one's lines are read, each engine decoding its own batch.
  int engines = 1;
  std::size_t spec_lines = 0;  ///< vLLM SpecDecoding lines: speculation was on, paired or not
  std::string vllm_version;    ///< the vLLM release the log last names ("" when none, or SGLang's log)
  /// The file's last decode line, unterminated and cut off (it does not parse, or its fields are
  /// the first ones of the launch's decode line before it, fewer): left out. Its 1-based line;
  /// nullopt when none was.
  std::optional<std::size_t> cut_last_line;
  bool speculative() const;  ///< some decode line reports an accept len, or a vLLM SpecDecoding line is logged
  std::vector<double> accept_lens() const;  ///< of the lines that report one, in order
  /// Median gen throughput of the non-speculative lines with one running request and a positive
  /// throughput, idle gaps left out (ingest/sglang_idle_gap.h); nullopt when there are none.
  std::optional<double> baseline_tok_s() const;
  std::size_t baseline_lines() const;       ///< the lines that median is taken over
  std::size_t baseline_idle_lines() const;  ///< the idle-gap lines left out of it
  /// Per #running-req (ascending), the lines with a positive gen throughput: their median (idle
  /// gaps left out) and mean accept len, speculative or not. Empty when no line has a throughput.
  std::vector<BatchFigures> by_batch() const;
};

/// Parses a log; InputError `what (FILE:LINE)` on a decode line with a missing or bad field, a
/// server_args line with a bad value of a key that is read, or a log without any decode line.
SglangLog parse_sglang_log(const std::string& text, const std::string& file);

}  // namespace specsim::ingest
