#include "validate/nccl_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cost/harness_launch.h"
#include "cost/nccl_model.h"
#include "ingest/nccl_tests.h"
#include "ingest/points_file.h"
#include "scenario/hardware.h"
#include "util/bounded_read.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

using nlohmann::json;

namespace {

constexpr double kSmallMin = 8 * 1024, kSmallMax = 64 * 1024;  // the 8-64 KB target band

std::string read_text(const std::string& path) { return read_bounded(path, path); }

const char* set_by(const NcclCheckRow& r) { return r.host_bound ? "host launch" : "collective"; }

std::string size_label(double b) {
  return b >= 1 << 20 ? fmt::format("{:g} MB", b / (1 << 20)) : fmt::format("{:g} KB", b / 1024);
}

}  // namespace

std::vector<NcclCheckLog> run_nccl_check(const std::string& dir, double min_bytes, double max_bytes) {
  const std::string index_path = dir + "/index.json";
  const json idx = read_json_file(index_path);
  const std::string f = "index.json:";
  if (!idx.is_object() || !idx.contains("logs") || !idx.at("logs").is_array())
    throw InputError("expected {\"logs\": [...]}", f + "logs");
  std::vector<NcclCheckLog> out;
  const SingleThreadLaunch thread_launch = load_single_thread_launch();
  int i = 0;
  for (const auto& e : idx.at("logs")) {
    const std::string w = f + "logs[" + std::to_string(i++) + "]";
    NcclCheckLog log;
    log.file = json_string(e, "file", w);
    log.hardware = json_string(e, "hardware", w);
    log.gpus = json_int(e, "gpus", w);
    if (log.gpus < 2) throw InputError("an all-reduce log needs >= 2 GPUs", w + ".gpus");
    NcclSettings s;
    if (e.contains("nccl_algo") && !e.at("nccl_algo").is_null()) {
      const std::string algo = json_string(e, "nccl_algo", w);
      if (algo != "tree" && algo != "ring") throw InputError("nccl_algo must be tree, ring or null", w + ".nccl_algo");
      s.algo_enabled = {algo == "tree", algo == "ring"};
    }
    if (e.contains("nccl_p2p_level") && !e.at("nccl_p2p_level").is_null())
      s.p2p_level = json_string(e, "nccl_p2p_level", w);
    const Hardware hw = load_hardware(log.hardware, log.gpus, w + ".hardware");
    try {
      nccl_uses_p2p(hw.topo, s.p2p_level);
    } catch (const InputError&) {
      throw InputError("unknown NCCL_P2P_LEVEL '" + s.p2p_level + "'", w + ".nccl_p2p_level");
    }
    const std::string text = read_text(dir + "/" + log.file);
    std::vector<ingest::TimedSize> measured;
    const std::string format = e.contains("format") ? json_string(e, "format", w) : "nccl-tests";
    bool folded_iters = false;  // nccl-tests `agg iters` > 1
    if (format == "points") {
      measured = ingest::parse_points_file(text, log.file);
      log.launch = json_string(e, "launch", w);
      // As the source's nccl-tests header states them: `-g N` and `-n` (nccl-tests' default 20).
      if (e.contains("gpus_per_thread")) log.gpus_per_thread = json_int(e, "gpus_per_thread", w);
      if (log.gpus_per_thread < 1 || log.gpus_per_thread > log.gpus)
        throw InputError("gpus_per_thread must be between 1 and gpus", w + ".gpus_per_thread");
      if (e.contains("iters")) log.iters = json_int(e, "iters", w);
      if (log.iters < 1) throw InputError("iters must be >= 1", w + ".iters");
    } else if (format == "nccl-tests") {
      const auto parsed = ingest::parse_nccl_tests(text, log.file);
      const auto& table = parsed.tables.front();
      log.graph = table.graph;
      log.gpus_per_thread = table.gpus_per_thread;
      log.iters = table.iters;
      folded_iters = table.agg_iters > 1;
      log.launch = table.threads * table.gpus_per_thread > 1
                       ? fmt::format("{} thread(s) x {} GPUs each (-g {})", table.threads, table.gpus_per_thread,
                                     table.gpus_per_thread)
                       : "one process per GPU";
      if (!table.graph) log.launch += ", eager";
      for (const auto& r : table.rows) measured.push_back({r.bytes, r.oop_us});
    } else {
      throw InputError("format must be nccl-tests or points", w + ".format");
    }
    // One thread per several GPUs, eager: the harness's host launch is priced (harness_launch.h).
    // `-m` > 1 folds several iterations into one group: a launch this check does not price.
    const int launch_gpus = log.graph || folded_iters ? 1 : log.gpus_per_thread;
    if (launch_gpus > 1) log.host_launch_us = thread_launch.host_us(launch_gpus);
    auto price = [&](const ingest::TimedSize& r) {
      const NcclEstimate est = nccl_allreduce(r.bytes, log.gpus, hw, s);
      const double collective = std::max(est.us, hw.gpu.kernel_min_us);
      const HarnessTime t = nccl_tests_iteration_us(collective, launch_gpus, log.iters, thread_launch);
      NcclCheckRow row;
      row.bytes = r.bytes, row.measured_us = r.us, row.predicted_us = t.us, row.collective_us = collective;
      row.choice =
          fmt::format("{}/{} {}", nccl_algo_name(est.algo), nccl_proto_name(est.proto), est.p2p ? "P2P" : "SHM");
      row.host_bound = t.host_bound;
      return row;
    };
    for (const auto& r : measured) {
      if (r.bytes < min_bytes && (!log.latency_point || r.bytes > log.latency_point->bytes))
        log.latency_point = price(r);
      if (r.bytes < min_bytes || r.bytes > max_bytes) continue;
      const NcclCheckRow row = price(r);
      if (r.bytes >= kSmallMin && r.bytes <= kSmallMax) {
        ++log.small_rows;
        log.worst_small_pct =
            std::max(log.worst_small_pct, std::fabs(100.0 * (row.predicted_us - row.measured_us) / row.measured_us));
      }
      log.rows.push_back(row);
    }
    out.push_back(std::move(log));
  }
  return out;
}

std::string nccl_check_text(const std::vector<NcclCheckLog>& logs) {
  std::string out =
      "NCCL all-reduce, shipped model (uncalibrated) against nccl-tests logs and published tables\n"
      "(nccl-tests: out-of-place time):\n";
  for (const auto& l : logs) {
    out += fmt::format("\n  {} ({} x{}, {}{})\n", l.file, l.hardware, l.gpus, l.launch, l.graph ? ", CUDA graphs" : "");
    if (l.host_launch_us > 0)
      out += fmt::format(
          "    host launch per iteration (one thread, {} grouped collectives; host work): {:.1f}us;\n"
          "    predicted = max(host launch, collective) + min(host launch, collective) / {} iterations\n",
          l.gpus_per_thread, l.host_launch_us, l.iters);
    const auto line = [](const NcclCheckRow& r) {
      return fmt::format("    {:>8} {:>8.1f}us {:>8.1f}us {:>+6.0f}% {:>8.1f}us  {:<11}  {}\n", size_label(r.bytes),
                         r.measured_us, r.predicted_us, 100.0 * (r.predicted_us - r.measured_us) / r.measured_us,
                         r.collective_us, set_by(r), r.choice);
    };
    out += fmt::format("    {:>8} {:>10} {:>10} {:>7} {:>10}  {:<11}  {}\n", "size", "measured", "predicted", "error",
                       "collective", "set by", "model's pick");
    for (const auto& r : l.rows) out += line(r);
    if (l.rows.empty()) out += "    no rows in the size range (partial log)\n";
    if (l.gpus_per_thread > 1 && l.graph)
      out += fmt::format("    note: one host thread launches {} CUDA graphs per iteration; that launch is not priced\n",
                         l.gpus_per_thread);
    if (const auto& p = l.latency_point)
      out += fmt::format(
          "    latency at {:g} B (not scored): measured {:.1f}us, predicted {:.1f}us ({:+.0f}%), set by {}, {}\n",
          p->bytes, p->measured_us, p->predicted_us, 100.0 * (p->predicted_us - p->measured_us) / p->measured_us,
          set_by(*p), p->choice);
  }
  out += "\ntarget: within 25% at 8-64 KB on every log:\n";
  for (const auto& l : logs)
    out += l.small_rows ? fmt::format("  {:<52} worst {:5.1f}%  {}\n", l.file, l.worst_small_pct,
                                      l.worst_small_pct <= 25 ? "met" : "missed")
                        : fmt::format("  {:<52} no 8-64 KB rows: not scored\n", l.file);
  return out;
}

json nccl_check_json(const std::vector<NcclCheckLog>& logs) {
  json a = json::array();
  for (const auto& l : logs) {
    json rows = json::array();
    for (const auto& r : l.rows)
      rows.push_back({{"bytes", r.bytes},
                      {"measured_us", r.measured_us},
                      {"predicted_us", r.predicted_us},
                      {"error_pct", 100.0 * (r.predicted_us - r.measured_us) / r.measured_us},
                      {"collective_us", r.collective_us},
                      {"set_by", set_by(r)},
                      {"model_pick", r.choice}});
    a.push_back({{"file", l.file},
                 {"hardware", l.hardware},
                 {"gpus", l.gpus},
                 {"launch", l.launch},
                 {"gpus_per_thread", l.gpus_per_thread},
                 {"iters", l.iters},
                 {"graph", l.graph},
                 {"host_launch_us", l.host_launch_us > 0 ? json(l.host_launch_us) : json(nullptr)},
                 {"rows", rows},
                 {"latency_point", l.latency_point ? json{{"bytes", l.latency_point->bytes},
                                                          {"measured_us", l.latency_point->measured_us},
                                                          {"predicted_us", l.latency_point->predicted_us},
                                                          {"collective_us", l.latency_point->collective_us},
                                                          {"set_by", set_by(*l.latency_point)},
                                                          {"model_pick", l.latency_point->choice}}
                                                   : json(nullptr)},
                 {"worst_error_pct_8_64kb", l.small_rows ? json(l.worst_small_pct) : json(nullptr)},
                 {"target_met", l.small_rows ? json(l.worst_small_pct <= 25) : json(nullptr)}});
  }
  return a;
}

}  // namespace specsim
