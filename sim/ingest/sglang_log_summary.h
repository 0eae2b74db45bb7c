#pragma once
// What `specsim diagnose` and `--baseline-from` take from an SGLang server log: the launch
// (server_args line) with the most decode lines, the batch size most of them ran at (or the one
// asked), and the figures of those lines.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ingest/sglang_idle_gap.h"
#include "ingest/sglang_log.h"

namespace specsim::ingest {

struct LogSummary {
  std::string file;
  std::optional<ServerArgs> launch;            ///< nullopt: no server_args line above the decode lines used
  std::size_t launches = 0;                    ///< server_args lines in the log
  std::size_t decode_lines = 0;                ///< of the chosen launch, with a positive gen throughput
  std::map<int, std::size_t> lines_per_batch;  ///< #running-req -> lines, of the chosen launch
  int batch_size = 0;                          ///< #running-req of the lines used
  std::vector<std::size_t> line_numbers;       ///< the lines whose gen throughput is used (1-based), in order
  /// Lines at that batch size whose gen throughput spans an idle gap (ingest/sglang_idle_gap.h):
  /// left out of the throughput figures; their accept len and token count still count.
  std::vector<ingest::IdleGapLine> idle_gap_lines;
  /// Lines at that batch size whose interval did not decode at one batch (DecodeLine::unsteady):
  /// left out of the throughput figures as the idle gaps are.
  std::vector<ingest::IdleGapLine> unsteady_lines;
  std::string stack = "sglang";  ///< the log's serving engine: "sglang" or "vllm"
  int engines = 1;               ///< vLLM: engines in the log (data parallel); one engine's lines are used
  std::string vllm_version;      ///< vLLM: the release the log last names; "" when none
  /// vLLM: the lines used that also prefilled (a positive prompt throughput), and the most of it.
  std::size_t prefill_interval_lines = 0;
  double prompt_tok_s_max = 0;
  double tok_s = 0;     ///< median gen throughput of the lines used
  double tok_s_cv = 0;  ///< their coefficient of variation (stdev / mean)
  double tok_s_min = 0, tok_s_max = 0;
  std::optional<double> accept_len;  ///< mean logged accept len of the lines used
  double accept_len_max = 0;
  std::size_t graph_lines = 0, eager_lines = 0;  ///< lines used logging `cuda graph: True` / `False`
  std::optional<long long> context_len;          ///< median token count / #running-req of the lines at the batch size
  std::string context_from;                      ///< the field it was read from (#token, #gpu-token, ...); "" when none
  bool speculative = false;                      ///< the lines used report an accept len
  std::optional<std::size_t> cut_last_line;      ///< the file's last decode line, cut off and left out
  /// The lines at the batch size: those used and the idle gaps.
  std::size_t lines_at_batch() const { return line_numbers.size() + idle_gap_lines.size() + unsteady_lines.size(); }
  /// The idle-gap lines' numbers, in order.
  std::vector<std::size_t> idle_gap_line_numbers() const {
    std::vector<std::size_t> v;
    for (const auto& g : idle_gap_lines) v.push_back(g.line);
    return v;
  }
};

/// Summarises the parsed log; `batch_size` picks the lines at that #running-req (else the batch
/// size with the most lines). InputError naming FILE, or `batch_where` (the flag that asked for the
/// batch size) when no line is at it.
LogSummary summarize_log(const SglangLog& log, const std::string& file, std::optional<int> batch_size,
                         const std::string& batch_where = "--batch-size");

}  // namespace specsim::ingest
