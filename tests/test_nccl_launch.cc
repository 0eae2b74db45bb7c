// `validate --nccl` pricing of the nccl-tests harness: one thread launching N grouped collectives
// (`-g N`) against one process per GPU.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "cost/harness_launch.h"
#include "cost/nccl_model.h"
#include "ingest/nccl_tests.h"
#include "scenario/hardware.h"
#include "test_util.h"
#include "util/error.h"
#include "validate/nccl_check.h"

using namespace specsim;

namespace {

// An nccl-tests all_reduce_perf log of 8 A100s at 8 KB and 64 KB, driven as `header` and `ranks` say.
std::string a100_log(const std::string& header, const std::string& ranks) {
  return "# nccl-tests version 2.19.4 nccl-headers=21903 nccl-library=21903\n" + header + "\n#\n# Using devices\n" +
         ranks +
         "#\n"
         "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   "
         "busbw  #wrong \n"
         "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  "
         "(GB/s)         \n"
         "        8192          2048     float     sum      -1    36.86    0.22    0.39       0    37.03    0.22    "
         "0.39       0\n"
         "       65536         16384     float     sum      -1    37.48    1.75    3.06       0    37.55    1.75    "
         "3.05       0\n";
}

std::string rank_lines(bool one_process_per_gpu) {
  std::string out;
  for (int r = 0; r < 8; ++r)
    out += "#  Rank  " + std::to_string(r) + " Group  0 Pid " + std::to_string(one_process_per_gpu ? 100 + r : 100) +
           " on host device  " + std::to_string(one_process_per_gpu ? 0 : r) + " [0x00] NVIDIA A100-SXM4-80GB\n";
  return out;
}

std::string write_log_dir(const std::string& log) {
  const std::string dir = test::fresh_dir();
  test::write_text(dir + "/a.txt", log);
  test::write_text(dir + "/index.json",
                   R"({"logs": [{"file": "a.txt", "hardware": "a100-sxm:nvswitch", "gpus": 8, "nccl_algo": null}]})");
  return dir;
}

}  // namespace

TEST_CASE("nccl-tests -g 8: one thread's launch of 8 grouped collectives, by hand") {
  const SingleThreadLaunch l{3.96, 1.6};
  // Host per iteration: 8 x 3.96 + 1.6 = 33.28 us.
  CHECK(l.host_us(8) == Approx(33.28));
  // A 15.2 us collective (NCCL's estimate at 8 KB on 8 A100s): the host sets the time, and the
  // last iteration's collective runs after the loop's last launch: 33.28 + 15.2 / 20 = 34.04 us.
  const HarnessTime host = nccl_tests_iteration_us(15.2, 8, 20, l);
  CHECK(host.us == Approx(34.04));
  CHECK(host.host_us == Approx(33.28));
  CHECK(host.host_bound);
  // A 50 us collective: the GPUs set the time, the first launch is paid once: 50 + 33.28 / 20.
  const HarnessTime gpu = nccl_tests_iteration_us(50.0, 8, 20, l);
  CHECK(gpu.us == Approx(51.664));
  CHECK_FALSE(gpu.host_bound);
  // One GPU per thread (one process per GPU): the collective alone, unchanged.
  const HarnessTime mpi = nccl_tests_iteration_us(15.2, 1, 20, l);
  CHECK(mpi.us == 15.2);
  CHECK(mpi.host_us == 0);
  CHECK_FALSE(mpi.host_bound);
}

TEST_CASE("the launch constants are read from models/nccl/tuning.json with their sources") {
  std::ifstream in(test::models_path("nccl/tuning.json"));
  const auto j = nlohmann::json::parse(in).at("single_thread_launch");
  const SingleThreadLaunch l = load_single_thread_launch();
  CHECK(l.per_gpu_us == j.at("per_gpu_us").at("value").get<double>());
  CHECK(l.group_us == j.at("group_us").at("value").get<double>());
  CHECK(j.at("per_gpu_us").at("source").get<std::string>().find("nccl-tests/issues/123") != std::string::npos);
  CHECK(j.at("note").get<std::string>().find("host work") != std::string::npos);
}

TEST_CASE("nccl-tests header fields: iters and agg iters, not warmup iters") {
  const auto table = [](const std::string& header) {
    return ingest::parse_nccl_tests(a100_log(header, rank_lines(false)), "a.txt").tables.at(0);
  };
  const auto t = table(
      "# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 40 agg iters: 3 "
      "validation: 1 graph: 0");
  CHECK(t.iters == 40);
  CHECK(t.agg_iters == 3);
  // Absent: nccl-tests' defaults.
  CHECK(table("# nThread 1 nGpus 8 validation: 1").iters == 20);
  CHECK(table("# nThread 1 nGpus 8 validation: 1").agg_iters == 1);
  CHECK_THROWS_AS(table("# nThread 1 nGpus 8 iters: x validation: 1"), InputError);
  CHECK_THROWS_AS(table("# nThread 1 nGpus 8 agg iters: 0 validation: 1"), InputError);
}

TEST_CASE("validate --nccl: a -g 8 log pays the launch, the same rows run one process per GPU do not") {
  const SingleThreadLaunch l = load_single_thread_launch();
  const Hardware hw = load_hardware("a100-sxm:nvswitch", 8, "test");
  const auto collective = [&](double bytes) {
    return std::max(nccl_allreduce(bytes, 8, hw, NcclSettings{}).us, hw.gpu.kernel_min_us);
  };
  const std::string g8 =
      "# nThread 1 nGpus 8 minBytes 8192 maxBytes 65536 step: 2(factor) warmup iters: 5 iters: 40 agg iters: 1 "
      "validation: 1 graph: 0";
  const std::string mpi =
      "# nThread 1 nGpus 1 minBytes 8192 maxBytes 65536 step: 2(factor) warmup iters: 5 iters: 40 agg iters: 1 "
      "validation: 1 graph: 0";
  const auto one_thread = run_nccl_check(write_log_dir(a100_log(g8, rank_lines(false))), 8192, 1 << 20);
  const auto per_gpu = run_nccl_check(write_log_dir(a100_log(mpi, rank_lines(true))), 8192, 1 << 20);
  REQUIRE(one_thread.size() == 1);
  REQUIRE(per_gpu.size() == 1);
  CHECK(one_thread[0].gpus_per_thread == 8);
  CHECK(one_thread[0].iters == 40);  // from the header, not the default 20
  CHECK(one_thread[0].host_launch_us == Approx(8 * l.per_gpu_us + l.group_us));
  CHECK(per_gpu[0].gpus_per_thread == 1);
  CHECK(per_gpu[0].host_launch_us == 0);
  REQUIRE(one_thread[0].rows.size() == 2);
  REQUIRE(per_gpu[0].rows.size() == 2);
  for (int i = 0; i < 2; ++i) {
    const double c = collective(per_gpu[0].rows[i].bytes);
    // One process per GPU: the collective as the model prices it, nothing added.
    CHECK(per_gpu[0].rows[i].predicted_us == c);
    CHECK(per_gpu[0].rows[i].collective_us == c);
    CHECK_FALSE(per_gpu[0].rows[i].host_bound);
    // One thread for 8 GPUs: max(host, collective) + min(host, collective) / 40.
    const double host = 8 * l.per_gpu_us + l.group_us;
    CHECK(one_thread[0].rows[i].collective_us == c);
    CHECK(one_thread[0].rows[i].predicted_us == Approx(std::max(host, c) + std::min(host, c) / 40));
    CHECK(one_thread[0].rows[i].host_bound == (host > c));
  }
  const std::string text = nccl_check_text(one_thread);
  CHECK(text.find("host launch per iteration") != std::string::npos);
  CHECK(text.find("host launch  ring/LL") != std::string::npos);
  const auto j = nccl_check_json(one_thread).at(0);
  CHECK(j.at("host_launch_us").get<double>() == Approx(one_thread[0].host_launch_us));
  CHECK(j.at("rows").at(0).at("set_by") == (one_thread[0].rows[0].host_bound ? "host launch" : "collective"));
  CHECK(nccl_check_json(per_gpu).at(0).at("host_launch_us").is_null());
  // `-m 2` folds two iterations into one group: a different launch, left unpriced.
  std::string agg = g8;
  agg.replace(agg.find("agg iters: 1"), 12, "agg iters: 2");
  const auto folded = run_nccl_check(write_log_dir(a100_log(agg, rank_lines(false))), 8192, 1 << 20);
  CHECK(folded[0].host_launch_us == 0);
  CHECK(folded[0].rows[0].predicted_us == collective(8192));
}

TEST_CASE("validate --nccl: shipped logs: -g 8 priced, the others unchanged, A100 within 25% at 8-64 KB") {
  const auto logs = run_nccl_check(test::traces_path("nccl-tests"), 8 * 1024, 1024 * 1024);
  int priced = 0;
  for (const auto& l : logs) {
    INFO(l.file);
    const bool one_thread = l.launch.find("(-g 8)") != std::string::npos;
    CHECK(one_thread == (l.gpus_per_thread == 8));
    CHECK(one_thread == (l.host_launch_us > 0));
    priced += one_thread;
    for (const auto& r : l.rows)
      if (!one_thread) CHECK(r.predicted_us == r.collective_us);
  }
  // -g 8: the two A100 logs, the RTX 4090 and RTX 5090 logs and the two RTX 4090 points tables.
  CHECK(priced == 6);
  const NcclCheckLog& a100 = logs.front();
  REQUIRE(a100.file.find("a100") != std::string::npos);
  CHECK(a100.iters == 20);
  CHECK(a100.small_rows == 4);
  CHECK(a100.worst_small_pct <= 25.0);
  for (const auto& r : a100.rows)
    if (r.bytes <= 64 * 1024) CHECK(r.host_bound);
}

TEST_CASE("validate --nccl: one A100 host run both ways: -g 8 slower than one process per GPU") {
  const auto logs = run_nccl_check(test::traces_path("nccl-tests"), 8 * 1024, 1024 * 1024);
  const auto find = [&](const std::string& part) -> const NcclCheckLog& {
    for (const auto& l : logs)
      if (l.file.find(part) != std::string::npos) return l;
    FAIL("no log " << part);
    return logs.front();
  };
  const NcclCheckLog& g8 = find("nvlink-g8-thanos");
  const NcclCheckLog& mpi = find("nvlink-mpi-thanos");
  CHECK(mpi.gpus_per_thread == 1);
  CHECK(mpi.launch == "one process per GPU, eager");
  CHECK(mpi.host_launch_us == 0);
  REQUIRE(g8.rows.size() == mpi.rows.size());
  REQUIRE(g8.rows.size() == 8);
  for (std::size_t i = 0; i < g8.rows.size(); ++i) {
    INFO(g8.rows[i].bytes);
    REQUIRE(g8.rows[i].bytes == mpi.rows[i].bytes);
    // Same box, same collective: the model prices the same collective for both runs and adds
    // the launch of eight collectives by one thread only to the -g 8 run, as the data is slower.
    CHECK(g8.rows[i].collective_us == Approx(mpi.rows[i].collective_us));
    CHECK(g8.rows[i].predicted_us > mpi.rows[i].predicted_us);
    CHECK(g8.rows[i].measured_us > mpi.rows[i].measured_us);
  }
}

TEST_CASE("validate --nccl: a points table's gpus_per_thread and iters are checked") {
  const std::string dir = test::fresh_dir();
  test::write_text(dir + "/t.txt", "8192 40.0\n");
  const auto with = [&](const std::string& extra) {
    test::write_text(dir + "/index.json",
                     R"({"logs": [{"file": "t.txt", "format": "points", "hardware": "rtx-4090:pcie-numa", )"
                     R"("gpus": 8, "launch": "x")" +
                         extra + "}]}");
  };
  with(R"(, "gpus_per_thread": 8, "iters": 10)");
  const auto logs = run_nccl_check(dir, 8 * 1024, 1024 * 1024);
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].iters == 10);
  REQUIRE(logs[0].rows.size() == 1);
  const auto& r = logs[0].rows[0];
  const double host = logs[0].host_launch_us;
  CHECK(r.predicted_us == Approx(std::max(host, r.collective_us) + std::min(host, r.collective_us) / 10));
  const std::pair<std::string, std::string> bad[] = {{R"(, "gpus_per_thread": 0)", ".gpus_per_thread"},
                                                     {R"(, "gpus_per_thread": 9)", ".gpus_per_thread"},
                                                     {R"(, "iters": 0)", ".iters"}};
  for (const auto& [extra, field] : bad) {
    with(extra);
    try {
      run_nccl_check(dir, 8 * 1024, 1024 * 1024);
      FAIL("no error for " << extra);
    } catch (const InputError& e) {
      CHECK(e.where().find(field) != std::string::npos);
    }
  }
}
