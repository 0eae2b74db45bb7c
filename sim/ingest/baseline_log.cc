#include "ingest/baseline_log.h"

#include <fmt/format.h>

#include <algorithm>

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
  const SglangLog log = parse_sglang_log(read_text(file, "--baseline-from"), file);
  const bool any = std::any_of(log.decode.begin(), log.decode.end(), [&](const DecodeLine& d) {
    return d.gen_tok_s > 0 && (!batch_size || d.running_req == *batch_size);
  });
  if (!any)
    throw InputError(batch_size ? fmt::format("no decode line without speculation at #running-req {} with a positive "
                                              "gen throughput",
                                              *batch_size)
                                : "no decode line without speculation with a positive gen throughput",
                     where);
  BaselineLog b{file, summarize_log(log, file, batch_size, where)};
  if (b.lines.speculative) throw InputError("the baseline log reports an accept len (speculation was on)", where);
  return b;
}

}  // namespace specsim::ingest
