#pragma once
// The simulated cycles as files: Chrome Trace Event JSON (Perfetto, chrome://tracing) and CSV.
// Op slices carry the kernel names the runtime's torch.profiler trace shows (kernel_names.h), so a
// real profile opened beside the predicted one matches by name. All ranks run the same ops in the
// analytic engine; at each collective the trace draws what the model holds about the wait for the
// slowest rank (the anchored per-all-reduce extra) and a flow event through the group's ranks.
#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "timeline/kernel_names.h"
#include "timeline/multi_cycle.h"

namespace specsim {

/// One backend's traced cycles.
struct TracedBackend {
  AllReduceChoice backend;
  std::vector<CycleSample> cycles;  ///< the cycles drawn, in order (all simulated ones, or a sample)
};

struct TraceInput {
  const Scenario* scenario = nullptr;
  const ScenarioResult* result = nullptr;
  std::vector<TracedBackend> backends;  ///< every evaluated backend, a process group each
  int ranks = 1;                        ///< ranks emitted (the tp size, capped by the caller)
  std::string runtime = "sglang";       ///< whose kernel names the op slices carry
  std::vector<std::string> notes;       ///< e.g. that ranks were capped or cycles sampled
};

/// Most op slices one trace or CSV may hold: larger asks are refused.
constexpr long long kMaxTraceSlices = 4'000'000;
/// Op slices a trace holds without sampling: past it, an evenly spaced sample of the cycles is
/// drawn (about 60 MB of JSON; Perfetto's UI loads it in seconds).
constexpr long long kTraceSliceBudget = 120'000;

/// Op slices of one cycle on one rank of one backend (at the scenario's KV length).
long long trace_slices_per_cycle(const Scenario& s);

/// Op slices the files would hold: kernels of the cycle phases x cycles x ranks x backends.
long long trace_slice_count(const TraceInput& in);

/// The indices (into `n` simulated cycles) a trace of at most `budget` op slices draws when each
/// cycle costs `per_cycle` slices: all of them, or an evenly spaced sample holding the first and
/// the last. `cap` > 0 caps the count further (--trace-cycles).
std::vector<int> traced_cycle_indices(int n, long long per_cycle, long long budget, int cap);

/// Chrome Trace Event JSON: per backend, a process per rank (threads: cycle/phase spans, GPU
/// stream, host launches) and one process with a plain decode step for comparison; flow events
/// join each collective's slices across the ranks.
std::string chrome_trace_json(const TraceInput& in);

/// CSV, one row per op per rank per cycle per backend:
/// cycle,phase,rank,op,shape,bytes,start_us,dur_us,forward,layer,kind,flops,comm_bytes,allreduce,kernel
std::string trace_csv(const TraceInput& in);

/// The CSV's first 13 columns (its header continues with ",allreduce,kernel"; those 13 are what other trace producers
/// write first too).
extern const char* const kTraceCsvHeader;

/// Hooks for other trace producers (replay_trace.cc), so every trace encodes events the same way:
/// an "X" slice with times in whole nanoseconds (written with its leading ",\n"), an "M"
/// metadata event, and JSON string escaping.
void trace_slice(fmt::memory_buffer& b, int pid, int tid, std::string_view name, std::string_view cat, double start_us,
                 double end_us, std::string_view args_json);
void trace_meta(fmt::memory_buffer& b, int pid, int tid, const char* what, std::string_view name);
std::string trace_escape(std::string_view s);

}  // namespace specsim
