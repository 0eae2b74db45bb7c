#include "validate/nccl_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cost/nccl_model.h"
#include "ingest/nccl_tests.h"
#include "spec/hardware.h"
#include "util/bounded_read.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

using nlohmann::json;

namespace {

constexpr double kSmallMin = 8 * 1024, kSmallMax = 64 * 1024;  // the 8-64 KB target band

std::string read_text(const std::string& path) { return read_bounded(path, path); }

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
    const Hardware hw = load_hardware(log.hardware, log.gpus, w + ".hardware");
    const auto parsed = ingest::parse_nccl_tests(read_text(dir + "/" + log.file), log.file);
    const auto& table = parsed.tables.front();
    log.graph = table.graph;
    for (const auto& r : table.rows) {
      if (r.bytes < min_bytes || r.bytes > max_bytes) continue;
      const NcclEstimate est = nccl_allreduce(r.bytes, log.gpus, hw, s);
      NcclCheckRow row{
          r.bytes, r.oop_us, std::max(est.us, hw.gpu.kernel_min_us),
          fmt::format("{}/{} {}", nccl_algo_name(est.algo), nccl_proto_name(est.proto), est.p2p ? "P2P" : "SHM")};
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
  std::string out = "NCCL all-reduce, shipped model (uncalibrated) against nccl-tests logs (out-of-place time):\n";
  for (const auto& l : logs) {
    out += fmt::format("\n  {} ({} x{}, {})\n", l.file, l.hardware, l.gpus, l.graph ? "CUDA graphs" : "eager");
    if (l.rows.empty()) {
      out += "    no rows in the size range (partial log)\n";
      continue;
    }
    out += fmt::format("    {:>8} {:>10} {:>10} {:>7}  {}\n", "size", "measured", "predicted", "error", "model's pick");
    for (const auto& r : l.rows)
      out += fmt::format("    {:>8} {:>8.1f}us {:>8.1f}us {:>+6.0f}%  {}\n", size_label(r.bytes), r.measured_us,
                         r.predicted_us, 100.0 * (r.predicted_us - r.measured_us) / r.measured_us, r.choice);
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
                      {"model_pick", r.choice}});
    a.push_back({{"file", l.file},
                 {"hardware", l.hardware},
                 {"gpus", l.gpus},
                 {"graph", l.graph},
                 {"rows", rows},
                 {"worst_error_pct_8_64kb", l.small_rows ? json(l.worst_small_pct) : json(nullptr)},
                 {"target_met", l.small_rows ? json(l.worst_small_pct <= 25) : json(nullptr)}});
  }
  return a;
}

}  // namespace specsim
