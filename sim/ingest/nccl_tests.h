#pragma once
// nccl-tests output (all_reduce_perf and friends): one or more tables, each opened by a
// `# nThread N nGpus M ...` line, with out-of-place and in-place columns; `-g N` single-process
// runs and MPI runs (one `#  Rank ...` line per rank) alike. Times, algbw and busbw as nccl-tests
// defines them (docs/sources.md#S-nccl-tests-format).
#include <string>
#include <vector>

namespace specsim::ingest {

struct NcclTestsRow {
  std::size_t line = 0;
  double bytes = 0;
  std::string type, redop;
  double oop_us = 0, oop_busbw_gbps = 0;  ///< out-of-place
  bool has_in_place = false;
  double ip_us = 0, ip_busbw_gbps = 0;  ///< in-place
};

struct NcclTestsTable {
  std::size_t line = 0;    ///< the `# nThread` line
  std::string collective;  ///< e.g. all_reduce_perf ("" when the log does not say)
  int threads = 1, gpus_per_thread = 1, rank_lines = 0;
  bool graph = false;  ///< `graph: 1`: timed with CUDA graphs
  int iters = 20;      ///< `iters: N` (`-n`): timed iterations per size (nccl-tests' default 20)
  int agg_iters = 1;   ///< `agg iters: N` (`-m`): iterations folded into one group launch
  int world() const { return rank_lines > threads * gpus_per_thread ? rank_lines : threads * gpus_per_thread; }
  std::vector<NcclTestsRow> rows;
};

struct NcclTestsLog {
  std::vector<NcclTestsTable> tables;
  std::size_t lines = 0, data_lines = 0, comment_lines = 0;
  std::size_t unknown_lines = 0;  ///< neither comments nor data (NCCL INFO, mpirun chatter): skipped
  /// Lines of rows cut mid-line after their out-of-place columns (a log copied in part): read
  /// without their in-place columns.
  std::vector<std::size_t> cut_lines;
};

/// Parses the text of FILE; InputError `what (FILE:LINE)` on a malformed row (one cut before its
/// out-of-place columns end included), a table without rows, or a file without any table.
NcclTestsLog parse_nccl_tests(const std::string& text, const std::string& file);

}  // namespace specsim::ingest
