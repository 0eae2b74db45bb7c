#pragma once
// The simulated cycles as files: Chrome Trace Event JSON (Perfetto, chrome://tracing) and CSV.
// All ranks run the same ops in the analytic engine, so every rank's track is the same timeline.
#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "timeline/multi_cycle.h"

namespace specsim {

struct TraceInput {
  const Scenario* scenario = nullptr;
  const ScenarioResult* result = nullptr;
  AllReduceChoice backend;          ///< the backend whose timeline is drawn
  std::vector<CycleSample> cycles;  ///< one per cycle, in order (context and tokens)
  int ranks = 1;                    ///< ranks emitted (the tp size, capped by the caller)
  std::vector<std::string> notes;   ///< e.g. that ranks were capped
};

/// Most op slices one trace or CSV may hold (about 250 bytes each): larger asks are refused.
constexpr long long kMaxTraceSlices = 4'000'000;

/// Op slices the files would hold: kernels of the cycle phases x cycles x ranks.
long long trace_slice_count(const TraceInput& in);

/// Chrome Trace Event JSON: a process per rank (threads: cycle/phase spans, GPU stream, host
/// launches) and one process with a plain decode step for comparison.
std::string chrome_trace_json(const TraceInput& in);

/// CSV, one row per op per rank per cycle:
/// cycle,phase,rank,op,shape,bytes,start_us,dur_us,forward,layer,kind,flops,comm_bytes
std::string trace_csv(const TraceInput& in);

/// The CSV's header line (its first 13 columns are what other trace producers write first too).
extern const char* const kTraceCsvHeader;

/// Hooks for other trace producers (replay_trace.cc), so every trace encodes events the same way:
/// an "X" slice with times in whole nanoseconds (written with its leading ",\n"), an "M"
/// metadata event, and JSON string escaping.
void trace_slice(fmt::memory_buffer& b, int pid, int tid, std::string_view name, std::string_view cat, double start_us,
                 double end_us, std::string_view args_json);
void trace_meta(fmt::memory_buffer& b, int pid, int tid, const char* what, std::string_view name);
std::string trace_escape(std::string_view s);

}  // namespace specsim
