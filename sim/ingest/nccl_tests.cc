#include "ingest/nccl_tests.h"

#include <fmt/format.h>

#include <cmath>

#include "ingest/text_lines.h"

namespace specsim::ingest {

namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// "key value" pairs on the `# nThread 1 nGpus 8 ... graph: 0` line: absent -> `fallback`; present
// but not a whole number in [0, max] -> an error naming the line.
int int_after(const std::vector<std::string_view>& f, std::string_view key, int fallback, int max,
              const std::string& file, std::size_t ln) {
  for (std::size_t i = 0; i + 1 < f.size(); ++i)
    if (f[i] == key) {
      double v = 0;
      if (parse_number(f[i + 1], v) && v >= 0 && v <= max && v == std::floor(v)) return static_cast<int>(v);
      fail_at(file, ln, fmt::format("{} '{}': expected a whole number in 0..{}", key, f[i + 1], max));
    }
  return fallback;
}

// `warmup iters: N`, `iters: N` and `agg iters: N` share the word `iters:`; the word before it
// (`warmup`, `agg`, or neither) says which one it is. Absent -> `fallback`; present but not a whole
// number in [1, 1e6] -> an error naming the line.
int iters_after(const std::vector<std::string_view>& f, std::string_view qualifier, int fallback,
                const std::string& file, std::size_t ln) {
  for (std::size_t i = 0; i + 1 < f.size(); ++i) {
    if (f[i] != "iters:") continue;
    const std::string_view before = i > 0 ? f[i - 1] : std::string_view{};
    const bool qualified = before == "warmup" || before == "agg";
    if (qualifier.empty() ? qualified : before != qualifier) continue;
    double v = 0;
    if (parse_number(f[i + 1], v) && v >= 1 && v <= 1'000'000 && v == std::floor(v)) return static_cast<int>(v);
    fail_at(file, ln,
            fmt::format("{}iters: '{}': expected a whole number in 1..1000000",
                        qualifier.empty() ? "" : std::string(qualifier) + " ", f[i + 1]));
  }
  return fallback;
}

constexpr int kMaxTableGpus = 1024;  // per table: threads x GPUs per thread, and rank lines

// The column header: how many fields come before the first `time`, and how many
// (time algbw busbw #wrong) groups follow.
struct Columns {
  int lead = 5, groups = 2;
  bool known = false;
};

Columns columns_from_header(const std::vector<std::string_view>& f) {
  Columns c;
  int lead = -1, groups = 0;
  for (std::size_t i = 0; i < f.size(); ++i)
    if (f[i] == "time") {
      if (lead < 0) lead = static_cast<int>(i);
      ++groups;
    }
  if (lead >= 0) c = Columns{lead, groups, true};
  return c;
}

}  // namespace

NcclTestsLog parse_nccl_tests(const std::string& text, const std::string& file) {
  NcclTestsLog log;
  const auto lines = split_lines(text);
  log.lines = lines.size();
  if (trim(text).empty()) fail_at(file, 1, "empty file: expected nccl-tests output");
  std::string collective;
  Columns cols;
  // specsim-arbench's own header, wherever it stands: a run script's logs put `# command:` or
  // `### round N` lines, or a summary of rows, before it.
  std::size_t arbench_line = 0;
  for (std::size_t i = 0; i < lines.size() && !arbench_line; ++i)
    if (trim(lines[i]).starts_with("# specsim-arbench")) arbench_line = i + 1;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::size_t ln = i + 1;
    const std::string_view l = trim(lines[i]);
    if (l.empty()) continue;
    if (l.front() == '#') {
      ++log.comment_lines;
      auto f = fields(l.substr(1));
      if (f.empty()) continue;
      if (f.size() >= 4 && f[0] == "Collective" && f[2] == "starting:") collective = std::string(f[3]);
      if (f[0] == "nThread") {
        NcclTestsTable t;
        t.line = ln;
        t.collective = collective;
        t.threads = int_after(f, "nThread", 1, kMaxTableGpus, file, ln);
        t.gpus_per_thread = int_after(f, "nGpus", 1, kMaxTableGpus, file, ln);
        t.graph = int_after(f, "graph:", 0, 1'000'000, file, ln) != 0;
        t.iters = iters_after(f, "", t.iters, file, ln);
        t.agg_iters = iters_after(f, "agg", t.agg_iters, file, ln);
        if (t.threads < 1 || t.gpus_per_thread < 1) fail_at(file, ln, "nThread and nGpus must be positive");
        if (t.threads * t.gpus_per_thread > kMaxTableGpus)
          fail_at(file, ln,
                  fmt::format("nThread x nGpus = {} GPUs, above {}", t.threads * t.gpus_per_thread, kMaxTableGpus));
        log.tables.push_back(std::move(t));
        cols = Columns{};
      } else if (f[0] == "Rank" && !log.tables.empty()) {
        if (++log.tables.back().rank_lines > kMaxTableGpus)
          fail_at(file, ln, fmt::format("more than {} rank lines in one table", kMaxTableGpus));
      } else if (f[0] == "size" || (f.size() > 1 && f[0] == "out-of-place")) {
        if (f[0] == "size") cols = columns_from_header(f);
      }
      continue;
    }
    if (!all_digits(fields(l).front())) {  // NCCL INFO lines, mpirun warnings, shell prompts
      ++log.unknown_lines;
      continue;
    }
    const auto f = fields(l);
    if (log.tables.empty() && arbench_line)
      fail_at(file, arbench_line,
              "a specsim-arbench log (the custom all-reduce's variants beside NCCL, each its own table), not "
              "all_reduce_perf's: give an nccl-tests log; arbench logs are records, read by no command");
    if (log.tables.empty() && text.find("# bytes") != std::string::npos && text.find("time_us") != std::string::npos)
      fail_at(file, ln,
              "a points file (bytes, time_us) of a published figure, which `specsim calibrate --nccl-tests FILE "
              "--world N` and `specsim validate --nccl` read: give an nccl-tests all_reduce_perf log here");
    if (log.tables.empty()) fail_at(file, ln, "data row before any '# nThread ... nGpus ...' header");
    // Without a header line, the field count tells: 13 = with root, 12 = without (old versions).
    Columns c = cols;
    if (!c.known)
      c = f.size() == 12 || f.size() == 8 ? Columns{4, f.size() == 12 ? 2 : 1, true}
                                          : Columns{5, f.size() == 9 ? 1 : 2, true};
    const std::size_t want = static_cast<std::size_t>(c.lead + 4 * c.groups),
                      one_group = static_cast<std::size_t>(c.lead + 4);
    // A row cut mid-line after its out-of-place columns (a log pasted in part, as published) still
    // holds one whole measurement: read, and listed in cut_lines so the reader can say so. A row
    // cut before them holds none and is refused below, naming its line.
    const bool cut = f.size() < want && c.groups > 1 && f.size() >= one_group;
    if (f.size() != want && !cut)
      fail_at(file, ln,
              fmt::format("expected {} columns (size count type redop{} then time algbw busbw #wrong x{}), got {} "
                          "(truncated line?)",
                          want, c.lead == 5 ? " root" : "", c.groups, f.size()));
    NcclTestsRow r;
    r.line = ln;
    if (!parse_number(f[0], r.bytes) || r.bytes <= 0) fail_at(file, ln, "size must be a positive byte count");
    r.type = std::string(f[2]);
    r.redop = std::string(f[3]);
    auto num = [&](std::size_t k, const char* what) {
      double v = 0;
      if (!parse_number(f[k], v) || v < 0)
        fail_at(file, ln, fmt::format("bad {} '{}' in column {}", what, f[k], k + 1));
      return v;
    };
    const auto g0 = static_cast<std::size_t>(c.lead);
    r.oop_us = num(g0, "time (us)");
    r.oop_busbw_gbps = num(g0 + 2, "busbw (GB/s)");
    if (r.oop_us <= 0) fail_at(file, ln, "time must be positive");
    if (cut) log.cut_lines.push_back(ln);
    if (c.groups >= 2 && !cut) {
      r.has_in_place = true;
      r.ip_us = num(g0 + 4, "in-place time (us)");
      r.ip_busbw_gbps = num(g0 + 6, "in-place busbw (GB/s)");
      if (r.ip_us <= 0) fail_at(file, ln, "in-place time must be positive");
    }
    ++log.data_lines;
    log.tables.back().rows.push_back(std::move(r));
  }
  if (log.tables.empty())
    fail_at(file, lines.size(), "no nccl-tests table: expected a '# nThread N nGpus M ...' header and size/time rows");
  for (const auto& t : log.tables)
    if (t.rows.empty()) fail_at(file, t.line, "this table has no data rows (truncated file?)");
  return log;
}

}  // namespace specsim::ingest
