#pragma once
// The rank tag SGLang puts before a scheduler's log lines when the server runs more than one
// scheduler: `[2025-08-27 10:00:00 DP3 TP3] Decode batch. ...`, `[... DP0 TP0 EP0] ...`
// (the prefix set by configure_logger in sglang/srt/managers/scheduler.py: " DP{dp_rank} TP{tp_rank}",
// " EP{ep_rank}" with expert parallelism). Under DP attention each DP rank logs its own batch.
#include <optional>
#include <string_view>

namespace specsim::ingest {

/// The DP rank of a `DPn` word in `prefix` (the text before "Decode batch"); nullopt when none.
std::optional<int> find_dp_rank(std::string_view prefix);

}  // namespace specsim::ingest
