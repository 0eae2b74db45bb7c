#include "ingest/baseline_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "ingest/server_log.h"
#include "ingest/text_lines.h"
#include "util/error.h"

namespace specsim::ingest {

void BaselineLog::check_tp(int tp_size, std::string_view whose) const {
  if (lines.launch && lines.launch->tp_size != tp_size)
    throw InputError(
        fmt::format("the baseline log ran tp {}, {} tp {}: another deployment", lines.launch->tp_size, whose, tp_size),
        "--baseline-from " + file);
}

BaselineLog read_baseline_log(const std::string& file, std::optional<int> batch_size) {
  const std::string where = "--baseline-from " + file;
  const SglangLog log = parse_server_log(read_text(file, "--baseline-from"), file);
  const bool any = std::any_of(log.decode.begin(), log.decode.end(), [&](const DecodeLine& d) {
    return d.gen_tok_s > 0 && (!batch_size || d.running_req == *batch_size);
  });
  if (!any) {
    // The batch sizes the log does decode at, for a true hint (its lines measure those batches).
    std::map<int, int> lines_at;
    for (const auto& d : log.decode)
      if (d.gen_tok_s > 0) ++lines_at[d.running_req];
    std::string has;
    for (const auto& [b, n] : lines_at) has += fmt::format("{}{} ({} lines)", has.empty() ? "" : ", ", b, n);
    if (lines_at.empty())  // (always so without a batch size: no positive line at all)
      throw InputError("no decode line without speculation with a positive gen throughput", where);
    throw InputError(fmt::format("no decode line at #running-req {} (the run's batch size) with a positive gen "
                                 "throughput; the log decodes at #running-req {}: give --batch-size {} to anchor "
                                 "that batch",
                                 *batch_size, has,
                                 std::max_element(lines_at.begin(), lines_at.end(),
                                                  [](const auto& x, const auto& y) { return x.second < y.second; })
                                     ->first),
                     where);
  }
  BaselineLog b{file, summarize_log(log, file, batch_size, where)};
  if (b.lines.speculative || log.spec_lines > 0)
    throw InputError(fmt::format("the baseline log reports {} (speculation was on)",
                                 log.stack == "vllm" ? "SpecDecoding lines" : "an accept len"),
                     where);
  return b;
}

}  // namespace specsim::ingest
