// Measurements in: nccl-tests, SGLang logs, torch traces; calibrate round trip; every parser
// answers truncated, garbled and empty input with a FILE:LINE error (exit 2 on the command line).
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <functional>
#include <nlohmann/json.hpp>

#include "calibrate/nccl_tests_fit.h"
#include "cost/nccl_model.h"
#include "ingest/log_timestamp.h"
#include "ingest/nccl_tests.h"
#include "ingest/sglang_idle_gap.h"
#include "ingest/sglang_log.h"
#include "ingest/text_lines.h"
#include "ingest/torch_trace.h"
#include "scenario/hardware.h"
#include "test_util.h"
#include "util/error.h"

using namespace specsim;
using namespace specsim::ingest;
using namespace specsim::test;
using nlohmann::json;

namespace {

const std::string kA100 = traces_path("nccl-tests-a100sxm4x8-nvlink.txt");
const std::string kPcie = traces_path("nccl-tests-pcie8-mpi-synthetic.txt");
const std::string kSpecLog = traces_path("sglang-eagle3-decode-synthetic.log");
const std::string kBaseLog = traces_path("sglang-baseline-old-form-synthetic.log");
const std::string kTorch = traces_path("torch-trace-verify-synthetic.json");

// The InputError's location ("FILE:LINE") from parsing `text`.
template <class Parse>
std::string error_where(Parse parse, const std::string& text) {
  try {
    parse(text, "F");
  } catch (const InputError& e) {
    return e.where();
  }
  return "no error";
}

std::string cut(const std::string& text, std::size_t at) { return text.substr(0, at); }

}  // namespace

TEST_CASE("nccl-tests: the real A100 -g 8 log") {
  const auto log = parse_nccl_tests(slurp(kA100), kA100);
  REQUIRE(log.tables.size() == 1);
  const auto& t = log.tables[0];
  CHECK(t.collective == "all_reduce_perf");
  CHECK(t.world() == 8);
  CHECK(t.rows.size() == 25);
  CHECK(t.rows[0].bytes == 8);
  CHECK(t.rows[0].oop_us == Approx(34.84));
  CHECK(t.rows[0].ip_us == Approx(36.18));
  CHECK(t.rows.back().oop_busbw_gbps == Approx(181.32));
  CHECK(log.unknown_lines == 0);
}

TEST_CASE("nccl-tests: MPI runs, several tables, unknown lines counted") {
  const auto log = parse_nccl_tests(slurp(kPcie), kPcie);
  REQUIRE(log.tables.size() == 2);
  CHECK(log.tables[0].world() == 8);  // nGpus 1 per process, 8 rank lines
  CHECK(log.tables[1].world() == 4);
  CHECK(log.tables[0].rows.size() == 17);
  CHECK(log.unknown_lines == 5);  // the mpirun line and 2 NCCL INFO lines per table
}

TEST_CASE("nccl-tests: truncated, garbled, empty -> FILE:LINE") {
  const std::string text = slurp(kA100);
  const auto parse = [](const std::string& t, const std::string& f) { parse_nccl_tests(t, f); };
  // Cut inside the row of 8388608 bytes (line 33).
  const std::size_t row = text.find("     8388608");
  CHECK(error_where(parse, cut(text, row + 60)) == "F:33");
  std::string garbled = text;
  garbled.replace(text.find("36.86"), 5, "3x.86");
  CHECK(error_where(parse, garbled) == "F:23");
  CHECK(error_where(parse, "") == "F:1");
  CHECK(error_where(parse, "hello\nworld\n") == "F:2");                              // no table at all
  CHECK(error_where(parse, cut(text, text.find("           8 "))) == "F:8");         // header, no rows
  CHECK(error_where(parse, "     8   2  float sum -1 1 2 3 0 1 2 3 0\n") == "F:1");  // row before a header
}

TEST_CASE("calibrate: fit of the A100 log reproduces it within 10% at 8K..8M") {
  int world = 0;
  const auto pts = allreduce_points(parse_nccl_tests(slurp(kA100), kA100), world, kA100);
  CHECK(world == 8);
  const NcclFit fit = fit_allreduce_curve(pts, world, "test");
  CHECK(max_relative_error(fit, pts) <= kNcclFitTolerance + 1e-9);
  CHECK(fit.pieces.front().lat_us == Approx(36.5).epsilon(0.05));  // the small-message floor

  const std::string dir = fresh_dir(), prof = dir + "/a100.json";
  const auto r = run_specsim({"calibrate", "--nccl-tests", kA100, "--hardware", "a100-sxm:nvswitch", "-o", prof});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Hardware hw = load_hardware(prof, 8);
  REQUIRE(hw.topo.nccl_fit);
  const auto log = parse_nccl_tests(slurp(kA100), kA100);  // kept alive: the loop walks into it
  for (const auto& row : log.tables[0].rows) {
    if (row.bytes < 8192 || row.bytes > 8388608) continue;
    const double us = nccl_allreduce(row.bytes, 8, hw, NcclSettings{}).us;
    INFO(row.bytes);
    CHECK(std::abs(us - row.oop_us) / row.oop_us < 0.10);
  }
  // Other world sizes keep NCCL's tuning model.
  CHECK_FALSE(nccl_allreduce(65536, 4, hw, NcclSettings{}).fitted);

  // `run --hardware PROFILE --allreduce nccl`: the verify all-reduce (TP 8 Llama-70B, 4 tokens x
  // 8192 x 2 = 64 KiB) costs what the log says at 64 KiB (37.5 us), within 10%.
  const auto run = run_specsim({"--json", "--model-path", "llama-3.1-70b", "--tp-size", "8", "--hardware", prof,
                                "--allreduce", "nccl", "--accept-len", "2", "--speculative-num-steps", "3",
                                "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto j = json::parse(run.out);
  const auto& sc = j["scenarios"][0];
  CHECK(sc["detail"].get<std::string>().find("fitted") != std::string::npos);
  for (const auto& p : sc["phases"])
    if (p["name"] == "verify") {
      CHECK(p["allreduce_bytes"].get<double>() / p["allreduce_count"].get<double>() == Approx(65536));
      const double per = p["allreduce_us"].get<double>() / p["allreduce_count"].get<double>();
      CHECK(std::abs(per - 37.5) / 37.5 < 0.10);
    }
}

TEST_CASE("calibrate: several world sizes need --world; bad logs and paths exit 2 with no file") {
  const std::string dir = fresh_dir();
  auto r =
      run_specsim({"calibrate", "--nccl-tests", kPcie, "--hardware", "rtx-pro-6000:pcie-numa", "-o", dir + "/p.json"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--world") != std::string::npos);
  r = run_specsim({"calibrate", "--nccl-tests", kPcie, "--world", "8", "--hardware", "rtx-pro-6000:pcie-numa", "-o",
                   dir + "/p.json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(load_hardware(dir + "/p.json", 8).topo.nccl_fit->world == 8);

  write_text(dir + "/trunc.txt", cut(slurp(kA100), slurp(kA100).find("     8388608") + 60));
  r = run_specsim(
      {"calibrate", "--nccl-tests", dir + "/trunc.txt", "--hardware", "a100-sxm:nvswitch", "-o", dir + "/x.json"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("trunc.txt:33") != std::string::npos);
  CHECK_FALSE(exists(dir + "/x.json"));
  r = run_specsim(
      {"calibrate", "--nccl-tests", kA100, "--hardware", "a100-sxm:nvswitch", "-o", dir + "/no/such/x.json"});
  CHECK(r.exit_code == 2);
  CHECK(run_specsim({"calibrate", "--hardware", "a100-sxm:nvswitch", "-o", dir + "/y.json"}).exit_code ==
        2);  // no mode
  CHECK(run_specsim({"calibrate", "--nccl-tests", kA100, "--hardware", "a100-sxm:nope", "-o", dir + "/y.json"})
            .exit_code == 2);
  CHECK_FALSE(exists(dir + "/y.json"));
}

TEST_CASE("SGLang logs: both decode-line forms") {
  const auto spec = parse_sglang_log(slurp(kSpecLog), kSpecLog);
  CHECK(spec.decode.size() == 60);
  CHECK(spec.prefill_lines == 1);
  CHECK(spec.unknown_lines == 4);  // the server_args line is read, not skipped
  REQUIRE(spec.server_args.size() == 1);
  CHECK(spec.server_args[0].tp_size == 8);
  CHECK(spec.decode[0].server_args_index == std::size_t{0});
  CHECK(spec.speculative());
  CHECK(spec.decode[0].accept_rate.has_value());
  CHECK(spec.decode[0].cuda_graph == false);
  CHECK_FALSE(spec.baseline_tok_s());
  const auto base = parse_sglang_log(slurp(kBaseLog), kBaseLog);
  CHECK(base.decode.size() == 35);
  CHECK_FALSE(base.speculative());
  CHECK_FALSE(base.decode[0].cuda_graph.has_value());
  CHECK(base.server_args.empty());
  CHECK_FALSE(base.decode[0].server_args_index.has_value());
  CHECK(base.baseline_lines() == 30);  // the 2-request lines are not the baseline
  CHECK(*base.baseline_tok_s() == Approx(89.5).epsilon(0.03));
}

TEST_CASE("SGLang logs: the token count under its newer names, never taken from another field") {
  // sgl-project/sglang#22331: the same server logs `#token` before the change, `#gpu-token` after.
  const std::string before = traces_path("sglang-logs/real-token-hisparse-before-sglang-22331.log");
  const std::string after = traces_path("sglang-logs/real-gpu-token-hisparse-sglang-22331.log");
  const auto b = parse_sglang_log(slurp(before), before);
  const auto a = parse_sglang_log(slurp(after), after);
  REQUIRE_FALSE(b.decode.empty());
  REQUIRE_FALSE(a.decode.empty());
  for (const auto& d : b.decode) CHECK(d.tokens_key == "#token");
  for (const auto& d : a.decode) {
    CHECK(d.tokens_key == "#gpu-token");
    CHECK(d.tokens == b.decode.front().tokens);  // both blocks hold the same 5 requests' KV tokens
  }
  // `#full token` (hybrid attention); `#token` wins where a line has several; none: no count.
  const std::string line = "[2026-01-01 00:00:00 TP0] Decode batch, #running-req: 2, ";
  const std::string tail = "cuda graph: True, gen throughput (token/s): 90.00, #queue-req: 0\n";
  const auto full = parse_sglang_log(line + "#full token: 300, full token usage: 0.01, #swa token: 40, " + tail, "F");
  CHECK(full.decode[0].tokens == 300);
  CHECK(full.decode[0].tokens_key == "#full token");
  const auto both = parse_sglang_log(line + "#gpu-token: 7, #token: 300, " + tail, "F");
  CHECK(both.decode[0].tokens == 300);
  CHECK(both.decode[0].tokens_key == "#token");
  const auto none = parse_sglang_log(line + "#cpu-token: 300, " + tail, "F");
  CHECK(none.decode[0].tokens == 0);
  CHECK(none.decode[0].tokens_key.empty());
  // SGLANG_LOG_FORWARD_ITERS: "Decode batch [N], ..."
  const auto iters =
      parse_sglang_log("[2026-01-01 00:00:00] Decode batch [1234], #running-req: 1, #token: 5, " + tail, "F");
  CHECK(iters.decode[0].running_req == 1);
  CHECK(iters.decode[0].tokens == 5);
  const auto parse = [](const std::string& t, const std::string& f) { parse_sglang_log(t, f); };
  CHECK(error_where(parse, "x\nDecode batch [12, #running-req: 1, " + tail) == "F:2");
  CHECK(error_where(parse, "Decode batch [], #running-req: 1, " + tail) == "F:1");
  CHECK(error_where(parse, "Decode batch [1x], #running-req: 1, " + tail) == "F:1");
  CHECK(error_where(parse, line + "#gpu-token: 1.5, " + tail) == "F:1");
}

TEST_CASE("SGLang logs: timestamps give each decode line's interval") {
  const std::string file = traces_path("sglang-logs/real-eagle3-idle-gap-sglang-11948.log");
  const auto log = parse_sglang_log(slurp(file), file);
  REQUIRE(log.decode.size() >= 3);
  CHECK(log.decode[0].first_of_launch);
  CHECK_FALSE(log.decode[0].since_previous_s);  // nothing above it
  for (std::size_t i = 1; i < log.decode.size(); ++i) {
    CHECK_FALSE(log.decode[i].first_of_launch);
    REQUIRE(log.decode[i].since_previous_s);
    CHECK(*log.decode[i].since_previous_s == log.decode[i].time->s - log.decode[i - 1].time->s);
    CHECK(*log.decode[i].since_previous_s <= 1.0);  // these lines are 0 or 1 s apart
  }
  // The forms SGLang's logger writes, and what is not a timestamp.
  const auto t = [](const std::string& s) { return find_log_timestamp(s); };
  REQUIRE(t("[1970-01-01 00:00:00 TP0] "));
  CHECK(t("[1970-01-01 00:00:00 TP0] ")->s == 0);
  CHECK(t("[1970-01-01 00:00:00 TP0] ")->date);
  CHECK(t("[1970-01-02 00:00:01] ")->s == 24 * 3600 + 1);
  CHECK(t("[2000-03-01 00:00:00]")->s - t("[2000-02-28 00:00:00]")->s == 2 * 24 * 3600);  // 2000 is a leap year
  CHECK(t("2026-06-07 10:59:31,659 [INFO] sglang: ")->s - t("2026-06-07 10:59:31 x")->s == Approx(0.659));
  CHECK(t("2025-12-04 20:35:53 INFO 151972 [scheduler_metrics_mixin.py:287] "));
  REQUIRE(t("[04:40:55 TP0] "));
  CHECK_FALSE(t("[04:40:55 TP0] ")->date);
  CHECK(t("[04:40:55 TP0] ")->s == 4 * 3600 + 40 * 60 + 55);
  CHECK_FALSE(t("[2025-13-01 10:00:00] "));
  CHECK_FALSE(t("[25:00:00 TP0] "));
  CHECK_FALSE(t("[2025-10-22 TP0] "));
  CHECK_FALSE(t("TP0 #running-req: 1"));
  // A time of day that goes back is the next day; a date that goes back is no interval.
  CHECK(*seconds_between(*t("[23:59:59]"), *t("[00:00:01]")) == 2);
  CHECK_FALSE(seconds_between(*t("[2025-01-02 00:00:00]"), *t("[2025-01-01 00:00:00]")));
  CHECK_FALSE(seconds_between(*t("[2025-01-02 00:00:00]"), *t("[00:00:01]")));
}

TEST_CASE("SGLang logs: a line averaging over idle time is left out of the baseline median") {
  // The plain-decode sample with a second request 9 minutes after the first: SGLang's first line
  // of it divides its tokens by the 9 minutes.
  std::string text;
  for (int i = 0; i < 6; ++i)
    text += fmt::format(
        "[2025-09-12 07:27:{:02d} TP0] Decode batch. #running-req: 1, #token: {}, token usage: 0.00, "
        "cuda graph: True, gen throughput (token/s): {}, #queue-req: 0,\n",
        14 + i, 44 + 40 * i, 98 + i);
  const std::string gap =
      "[2025-09-12 07:38:09 TP0] Decode batch. #running-req: 1, #token: 40, token usage: 0.00, "
      "cuda graph: True, gen throughput (token/s): 0.06, #queue-req: 0,\n";
  const auto steady = parse_sglang_log(text, "F");
  const auto gapped = parse_sglang_log(text + gap, "F");
  CHECK(*gapped.decode.back().since_previous_s == 10 * 60 + 50);
  CHECK(steady.baseline_idle_lines() == 0);
  CHECK(gapped.baseline_idle_lines() == 1);
  CHECK(gapped.baseline_lines() == steady.baseline_lines());
  CHECK(*gapped.baseline_tok_s() == *steady.baseline_tok_s());
  // The same slow line one second after the previous one is no idle gap: it is kept.
  std::string close = gap;
  close.replace(close.find("07:38:09"), 8, "07:27:20");
  const auto slow = parse_sglang_log(text + close, "F");
  CHECK(slow.baseline_idle_lines() == 0);
  CHECK(slow.baseline_lines() == steady.baseline_lines() + 1);
  // The command line says how many it left out.
  const std::string dir = fresh_dir();
  write_text(dir + "/gap.log", text + gap);
  const auto r = run_specsim({"ingest", "--sglang-log", dir + "/gap.log"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find(fmt::format("{:.1f} tok/s over {} lines (1 after idle gaps left out)", *steady.baseline_tok_s(),
                               steady.baseline_lines())) != std::string::npos);
  const auto j = json::parse(run_specsim({"ingest", "--sglang-log", dir + "/gap.log", "--json"}).out);
  CHECK(j.at("baseline_idle_gap_lines") == 1);
  CHECK(j.at("baseline_tok_s").get<double>() == *steady.baseline_tok_s());
}

TEST_CASE("SGLang logs: odd timestamps and newer fields parse or are refused with their line, never crash") {
  const std::string dir = fresh_dir();
  const std::string tail =
      "#running-req: 1, #token: 50, cuda graph: True, gen throughput (token/s): 90.00, #queue-req: 0\n";
  std::string odd;
  for (const std::string stamp : {"[2025-13-45 99:99:99 TP0]", "[9999-12-31 23:59:60 TP0]", "[0000-01-01 00:00:00 TP0]",
                                  "[2025-01-02 00:00:00]", "[2025-01-01 00:00:00]", "[23:59:59 TP0]", "[00:00:00 TP0]",
                                  "[00:00:00.99999999999999999999 TP0]", "[12:34]", "[]", "2025-10-22 10:27:57,"})
    odd += stamp + " Decode batch, " + tail;
  write_text(dir + "/odd.log", odd);
  const auto r = run_specsim({"ingest", "--sglang-log", dir + "/odd.log", "--json"});
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out).at("decode_lines") == 11);
  const auto d = run_specsim(
      {"diagnose", dir + "/odd.log", "--hardware", "h100-sxm:nvswitch", "--model", "llama-3.1-8b", "--json"});
  INFO(d.err);
  REQUIRE(d.exit_code == 0);
  CHECK(json::parse(d.out).at("idle_gap_lines").empty());  // every line at the steady figure
  write_text(dir + "/iters.log", "Decode batch [" + std::string(40, '9') + "], " + tail + "Decode batch [7, " + tail);
  write_text(dir + "/gpu.log", "Decode batch, #running-req: 1, #gpu-token: 1e300, gen throughput (token/s): 9\n");
  write_text(dir + "/full.log", "Decode batch, #running-req: 1, #full token: -3, gen throughput (token/s): 9\n");
  for (const auto& [args, where] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"ingest", "--sglang-log", dir + "/iters.log"}, "iters.log:2"},
           {{"ingest", "--sglang-log", dir + "/gpu.log"}, "gpu.log:1"},
           {{"diagnose", dir + "/full.log", "--hardware", "h100-sxm:nvswitch", "--model", "llama-3.1-8b"},
            "full.log:1"}}) {
    const auto bad = run_specsim(args);
    INFO(bad.err);
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.rfind("error: ", 0) == 0);
    CHECK(bad.err.find(where) != std::string::npos);
    CHECK(bad.out.empty());
  }
}

TEST_CASE("SGLang logs: truncated, garbled, empty -> FILE:LINE") {
  const auto parse = [](const std::string& t, const std::string& f) { parse_sglang_log(t, f); };
  const std::string text = slurp(kSpecLog);
  const std::size_t l7 = text.find("Decode batch", text.find("Decode batch") + 1);  // line 7
  // the file's last line cut off without its newline (a copied excerpt): left out and said, the
  // lines above it read; a cut line that is the only decode line is still an error
  for (const std::size_t at : {l7 + 12, l7 + 40, text.find("gen throughput (token/s): ", l7) + 27}) {
    const auto log = parse_sglang_log(cut(text, at), "F");
    CHECK(log.cut_last_line == std::optional<std::size_t>(7));
    CHECK(log.decode.size() == 1);
  }
  const std::size_t first = text.find("Decode batch");
  CHECK(error_where(parse, cut(text, first + 40)) != "no error");
  // the same line cut, then a newline: a broken line, not a cut-off excerpt
  CHECK(error_where(parse, cut(text, l7 + 40) + "\n") == "F:7");
  // a complete last line of another format (a plain run's, fewer fields) is kept
  const std::string plain = "Decode batch, #running-req: 1, #token: 900, gen throughput (token/s): 150.00";
  const auto mixed = parse_sglang_log(cut(text, text.find('\n', l7) + 1) + plain, "F");
  CHECK_FALSE(mixed.cut_last_line);
  CHECK(mixed.decode.size() == 3);
  // said where the log is read: ingest's text and JSON
  const std::string dir = fresh_dir();
  write_text(dir + "/cut.log", cut(text, l7 + 40));
  const auto shown = run_specsim({"ingest", "--sglang-log", dir + "/cut.log"});
  CHECK(shown.out.find("its last line, 7, ends without a newline and is cut off: left out") != std::string::npos);
  CHECK(json::parse(run_specsim({"ingest", "--sglang-log", dir + "/cut.log", "--json"}).out)["cut_last_line"] == 7);
  std::string garbled = text;
  garbled.replace(garbled.find("accept len: ", l7) + 12, 1, "?");
  CHECK(error_where(parse, garbled) == "F:7");
  CHECK(error_where(parse, "") == "F:1");
  CHECK(error_where(parse, "\x01\x02garbage\nmore garbage\nand more\n") == "F:3");
}

TEST_CASE("torch trace: kernels by kind, per step") {
  CHECK(classify_kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)") == KernelKind::NcclAllReduce);
  CHECK(classify_kernel("ncclKernel_AllReduce_RING_LL_Sum_half") == KernelKind::NcclAllReduce);
  CHECK(classify_kernel("ncclDevKernel_AllGather_RING_LL") == KernelKind::NcclOther);
  CHECK(classify_kernel("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(...)") == KernelKind::CustomAllReduce);
  CHECK(classify_kernel("cross_device_reduce_2stage") == KernelKind::CustomAllReduce);
  CHECK(classify_kernel("specsim::car_one_shot_push<8>") == KernelKind::CustomAllReduce);
  CHECK(classify_kernel("at::native::unrolled_elementwise_kernel<scalar_t>") == KernelKind::Other);
  CHECK(classify_kernel("nvjet_tst_64x8_64x16_4x1_v_bz_TNT") == KernelKind::Gemm);
  CHECK(classify_kernel("void cutlass::device_kernel<flashinfer::gemm::GroupedGemmKernel>") == KernelKind::Gemm);
  CHECK(classify_kernel("void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<cutlass::bfloat16_t>>") ==
        KernelKind::Attention);
  CHECK(classify_kernel("void flashinfer::BatchMLAPagedAttentionKernel<>") == KernelKind::Attention);
  CHECK(classify_kernel("triton_poi_fused_add_rsqrt_0") == KernelKind::Other);

  const auto s = parse_torch_trace(slurp(kTorch), kTorch);
  CHECK(s.steps == 2);
  CHECK(s.count[static_cast<int>(KernelKind::NcclAllReduce)] == 2 * 9);
  CHECK(s.count[static_cast<int>(KernelKind::NcclOther)] == 2);
  CHECK(s.count[static_cast<int>(KernelKind::Gemm)] == 2 * 12);
  CHECK(s.count[static_cast<int>(KernelKind::Attention)] == 2 * 4);
  CHECK(s.count[static_cast<int>(KernelKind::Other)] == 2 * 5 + 2);  // the 2 copies' time and count with "other"
  CHECK(s.memcpy_memset == 2);
  double other_by_name = 0;
  for (const auto& [name, n] : s.by_name)
    if (n.kind == KernelKind::Other) other_by_name += n.us;
  CHECK(other_by_name == Approx(s.us[static_cast<int>(KernelKind::Other)]));
  CHECK(s.unknown == 1);
  CHECK(s.mean_nccl_allreduce_us() == Approx(200).epsilon(0.01));
}

TEST_CASE("torch trace: truncated, garbled, empty -> FILE:LINE") {
  const auto parse = [](const std::string& t, const std::string& f) { parse_torch_trace(t, f); };
  const std::string text = slurp(kTorch);
  const auto lines = split_lines(text);
  CHECK(error_where(parse, cut(text, text.size() / 2)) != "no error");
  CHECK(error_where(parse, cut(text, text.size() / 2)) != "F:1");  // points into the file
  CHECK(error_where(parse, "") == "F:1");
  CHECK(error_where(parse, "{\"traceEvents\": [\n{\"ph\": \"X\", \"cat\": \"cpu_op\"}\n]}") !=
        "no error");  // no kernels
  // A kernel event without dur: the error names its line (line 10 of the sample is a kernel).
  std::string nodur = text;
  const std::size_t k = nodur.find("\"cat\": \"kernel\"");
  const std::size_t d = nodur.find(", \"dur\"", k);
  nodur.erase(d, nodur.find(',', d + 2) - d);
  CHECK(error_where(parse, nodur) == "F:" + std::to_string(line_of_offset(text, k)));
  std::string garbled = text;
  garbled[text.find("traceEvents") + 20] = '}';
  CHECK(error_where(parse, garbled) != "no error");
}

TEST_CASE("ingest --sglang-log: every batch size's lines, median throughput and accept len, text and JSON") {
  // Real excerpts at 5 running requests: no one-request baseline, yet their throughput is shown.
  const std::string after = traces_path("sglang-logs/real-gpu-token-hisparse-sglang-22331.log");
  const std::string before = traces_path("sglang-logs/real-token-hisparse-before-sglang-22331.log");
  auto r = run_specsim({"ingest", "--sglang-log", after});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("7 lines, 6 decode lines, 0 prefill lines, 1 other lines skipped") != std::string::npos);
  CHECK(r.out.find("unknown") == std::string::npos);
  CHECK(r.out.find("#running-req 5: 6 lines, median gen throughput 153.69 tok/s\n") != std::string::npos);
  json j = json::parse(run_specsim({"ingest", "--sglang-log", after, "--json"}).out);
  CHECK(j["baseline_tok_s"].is_null());
  REQUIRE(j["by_batch"].size() == 1);
  CHECK(j["by_batch"][0]["running_req"] == 5);
  CHECK(j["by_batch"][0]["lines"] == 6);
  CHECK(j["by_batch"][0]["median_tok_s"].get<double>() == Approx(153.685));
  CHECK(j["by_batch"][0]["accept_len"].is_null());
  j = json::parse(run_specsim({"ingest", "--sglang-log", before, "--json"}).out);
  REQUIRE(j["by_batch"].size() == 1);
  CHECK(j["by_batch"][0]["lines"] == 8);
  CHECK(j["by_batch"][0]["median_tok_s"].get<double>() == Approx(144.525));
  // The old form's two batch sizes, each its own median; the baseline is still the one-request one.
  j = json::parse(run_specsim({"ingest", "--sglang-log", kBaseLog, "--json"}).out);
  REQUIRE(j["by_batch"].size() == 2);
  CHECK(j["by_batch"][0]["running_req"] == 1);
  CHECK(j["by_batch"][0]["lines"] == 30);
  CHECK(j["by_batch"][1]["running_req"] == 2);
  CHECK(j["by_batch"][1]["lines"] == 5);
  CHECK(j["by_batch"][1]["median_tok_s"].get<double>() == Approx(169.99));
  CHECK(j["baseline_tok_s"].get<double>() == j["by_batch"][0]["median_tok_s"].get<double>());
  r = run_specsim({"ingest", "--sglang-log", kBaseLog});
  CHECK(r.out.find("#running-req 2: 5 lines, median gen throughput 169.99 tok/s\n") != std::string::npos);
  // A speculative log: the mean accept len of the batch size's lines.
  j = json::parse(run_specsim({"ingest", "--sglang-log", kSpecLog, "--json"}).out);
  REQUIRE(j["by_batch"].size() == 1);
  CHECK(j["by_batch"][0]["accept_len"].get<double>() == Approx(2.069));
  CHECK(run_specsim({"ingest", "--sglang-log", kSpecLog}).out.find(", mean accept len 2.069") != std::string::npos);
}

TEST_CASE("ingest and run: the command line on measurement files") {
  auto r = run_specsim({"ingest", "--torch-trace", kTorch});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("nccl_allreduce") != std::string::npos);
  CHECK(r.out.find("ProfilerStep") != std::string::npos);
  r = run_specsim({"ingest", "--sglang-log", kBaseLog, "--json"});
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out)["baseline_tok_s"].get<double>() == Approx(89.5).epsilon(0.03));
  CHECK(run_specsim({"ingest", "--nccl-tests", kPcie}).exit_code == 0);
  CHECK(run_specsim({"ingest"}).exit_code == 2);

  const std::string dir = fresh_dir();
  write_text(dir + "/empty.log", "");
  write_text(dir + "/garbled.json", std::string("\x00\xff{\"traceEvents\": [", 19));
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"ingest", "--sglang-log", dir + "/empty.log"},
           {"ingest", "--torch-trace", dir + "/garbled.json"},
           {"ingest", "--nccl-tests", dir + "/empty.log"},
           {"--accept-from", dir + "/empty.log"},
           {"--anchor-trace", dir + "/garbled.json"},
           {"--accept-from", kBaseLog},    // no speculation in it
           {"--baseline-from", kSpecLog},  // no plain decoding in it
           {"--accept-from", kSpecLog, "--accept-len", "2"},
       }) {
    const auto e = run_specsim(args);
    INFO(args[1] << " " << e.err);
    CHECK(e.exit_code == 2);
    CHECK(e.err.rfind("error: ", 0) == 0);
  }
  CHECK(run_specsim({"ingest", "--sglang-log", dir + "/empty.log"}).err.find("empty.log:1") != std::string::npos);

  r = run_specsim({"--json", "--accept-from", kSpecLog, "--cycles", "200", "--seed", "3"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto j = json::parse(r.out);
  CHECK(j["scenarios"][0]["cycles"]["accept_source"].get<std::string>().find("empirical") != std::string::npos);
  CHECK(j["scenarios"][0]["cycles"]["mean_accept_len"].get<double>() == Approx(2.04).epsilon(0.1));

  // Measurements from files join the built-in scenario's, each listed with its file.
  r = run_specsim({"--json", "--anchor-trace", kTorch, "--baseline-from", kBaseLog, "--accept-len", "2"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  j = json::parse(r.out);
  int from_files = 0;
  for (const auto& a : j["settings"]["anchors"]) {
    if (a["origin"] != "command line") continue;
    ++from_files;
    if (a["kind"] == "allreduce") {
      CHECK(a["measured"].get<double>() == Approx(200).epsilon(0.01));
      CHECK(a["source"].get<std::string>().find("--anchor-trace") == 0);
    } else {
      CHECK(a["kind"] == "baseline");
      CHECK(a["measured_step_us"].get<double>() == Approx(1e6 / 89.5).epsilon(0.03));
      CHECK(a["source"].get<std::string>().find("--baseline-from") == 0);
    }
  }
  CHECK(from_files == 2);
}

TEST_CASE("every parser: any truncation or byte flip parses or gives a FILE:LINE InputError, nothing else") {
  const std::vector<std::pair<std::string, std::function<void(const std::string&)>>> cases = {
      {kA100, [](const std::string& t) { parse_nccl_tests(t, "F"); }},
      {kPcie, [](const std::string& t) { parse_nccl_tests(t, "F"); }},
      {kSpecLog, [](const std::string& t) { parse_sglang_log(t, "F"); }},
      {kBaseLog, [](const std::string& t) { parse_sglang_log(t, "F"); }},
      {kTorch, [](const std::string& t) { parse_torch_trace(t, "F"); }},
  };
  std::uint32_t x = 12345;  // a fixed LCG: the same inputs every run
  auto next = [&] { return x = x * 1664525u + 1013904223u; };
  for (const auto& [file, parse] : cases) {
    const std::string text = slurp(file);
    REQUIRE_FALSE(text.empty());
    for (int i = 0; i < 200; ++i) {
      std::string t = i < 100 ? text.substr(0, next() % text.size()) : text;
      if (i >= 100)
        for (int f = 0; f < 3; ++f) t[next() % t.size()] = static_cast<char>(next() & 0xff);
      try {
        parse(t);
      } catch (const InputError& e) {
        INFO(file << " case " << i << ": " << e.what());
        REQUIRE(e.where().rfind("F:", 0) == 0);
      }
    }
  }
}

TEST_CASE("SGLang log: counts that overflow their integer type are bad input (found by fuzz_sglang_log)") {
  const std::string line =
      "Decode batch, #running-req: 1e58, #token: 186, token usage: 0.00, gen throughput (token/s): 17.86\n";
  CHECK_THROWS_AS(parse_sglang_log(line, "F"), specsim::InputError);
  const std::string frac =
      "Decode batch, #running-req: 1.5, #token: 186, token usage: 0.00, gen throughput (token/s): 17.86\n";
  CHECK_THROWS_AS(parse_sglang_log(frac, "F"), specsim::InputError);
}

namespace {

// A server_args line in the form SGLang logs it (the dataclass repr, one line), cut down.
const std::string kServerArgs =
    "[2025-11-06 01:22:00 TP0] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', "
    "tokenizer_path='meta-llama/Llama-3.1-8B-Instruct', tokenizer_mode='auto', load_format='auto', "
    "model_loader_extra_config='{}', trust_remote_code=False, context_length=None, host='127.0.0.1', port=30000, "
    "dtype='bfloat16', quantization=None, kv_cache_dtype='auto', mem_fraction_static=0.835, "
    "max_running_requests=48, chunked_prefill_size=8192, served_model_name='llama-8b', tp_size=2, dp_size=1, "
    "json_model_override_args='{\"a\": [1, 2]}', lora_paths=None, attention_backend='fa3', "
    "speculative_algorithm='EAGLE3', speculative_draft_model_path='jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B', "
    "speculative_num_steps=3, speculative_eagle_topk=4, speculative_num_draft_tokens=16, "
    "speculative_accept_threshold_single=1.0, cuda_graph_max_bs=8, cuda_graph_bs=[1, 2, 4, 8], "
    "disable_cuda_graph=False, enable_dp_attention=False, disable_overlap_schedule=True, "
    "disable_custom_all_reduce=True, enable_torch_compile=False, weird=<Enum.X: 'a, b)'>, "
    "nested={'k': (1, 'x)'), 'q': \"it's\"})";

std::string with(const std::string& line, const std::string& from, const std::string& to) {
  std::string s = line;
  s.replace(s.find(from), from.size(), to);
  return s;
}

}  // namespace

TEST_CASE("SGLang server_args line: the keys that shape the cycle, Python literals") {
  const auto a = parse_server_args(kServerArgs, "F", 3);
  CHECK(a.line == 3);
  CHECK(a.model_path == "meta-llama/Llama-3.1-8B-Instruct");
  CHECK(a.served_model_name == std::optional<std::string>("llama-8b"));
  CHECK(a.tp_size == 2);
  CHECK(a.dp_size == 1);
  CHECK(a.speculative());
  CHECK(*a.speculative_algorithm == "EAGLE3");
  CHECK(*a.speculative_draft_model_path == "jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B");
  CHECK(*a.speculative_num_steps == 3);
  CHECK(*a.speculative_eagle_topk == 4);
  CHECK(*a.speculative_num_draft_tokens == 16);
  CHECK(*a.cuda_graph_max_bs == 8);
  CHECK(*a.max_running_requests == 48);
  CHECK_FALSE(a.disable_cuda_graph);
  CHECK(a.disable_overlap_schedule);
  CHECK(a.disable_custom_all_reduce);
  CHECK_FALSE(a.enable_dp_attention);
  CHECK(*a.attention_backend == "fa3");
  CHECK(a.dtype == "bfloat16");
  CHECK_FALSE(a.quantization.has_value());
  CHECK(a.kv_cache_dtype == "auto");
  CHECK(*a.mem_fraction_static == Approx(0.835));
  // Unused keys are kept as logged: brackets and quotes do not split a value.
  CHECK(a.raw.at("cuda_graph_bs") == "[1, 2, 4, 8]");
  CHECK(a.raw.at("weird") == "<Enum.X: 'a, b)'>");
  CHECK(a.raw.at("nested") == "{'k': (1, 'x)'), 'q': \"it's\"}");
  CHECK(a.raw.at("json_model_override_args") == "'{\"a\": [1, 2]}'");
  CHECK(a.raw.size() == 36);

  // Speculation off: the algorithm and its settings are None.
  const auto off = parse_server_args(
      "server_args=ServerArgs(model_path='m', speculative_algorithm=None, speculative_num_steps=None)", "F", 1);
  CHECK_FALSE(off.speculative());
  CHECK_FALSE(off.speculative_num_steps.has_value());
  CHECK(off.tp_size == 1);  // SGLang's default when the key is absent

  // An arrow inside an object's repr closes no bracket.
  const auto arrow = parse_server_args(
      "server_args=ServerArgs(model_path='m', hook=<function f -> int>, tp_size=4, x=[1, (2, 3)])", "F", 1);
  CHECK(arrow.raw.at("hook") == "<function f -> int>");
  CHECK(arrow.tp_size == 4);
  CHECK(arrow.raw.at("x") == "[1, (2, 3)]");
}

TEST_CASE("SGLang server_args line: a bad value of a key that is read names FILE:LINE and the key") {
  const auto error = [](const std::string& line) -> std::pair<std::string, std::string> {
    try {
      parse_server_args(line, "F", 7);
    } catch (const InputError& e) {
      return {e.what(), e.where()};
    }
    return {"no error", ""};
  };
  for (const auto& [from, to, key] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"tp_size=2", "tp_size='2'", "tp_size"},
           {"tp_size=2", "tp_size=0", "tp_size"},
           {"speculative_num_steps=3", "speculative_num_steps=2.5", "speculative_num_steps"},
           {"speculative_eagle_topk=4", "speculative_eagle_topk=1e30", "speculative_eagle_topk"},
           {"disable_cuda_graph=False", "disable_cuda_graph=0", "disable_cuda_graph"},
           {"model_path='meta-llama/Llama-3.1-8B-Instruct'", "model_path=None", "model_path"},
           {"speculative_algorithm='EAGLE3'", "speculative_algorithm=EAGLE3", "speculative_algorithm"},
           {"mem_fraction_static=0.835", "mem_fraction_static=1.5", "mem_fraction_static"},
       }) {
    const auto [what, where] = error(with(kServerArgs, from, to));
    CHECK(where == "F:7");
    CHECK(what.find(key) != std::string::npos);
  }
  // A bad-looking value of a key specsim does not read is skipped.
  CHECK(error(with(kServerArgs, "port=30000", "port=abc")).first == "no error");
  // Truncated, unclosed, no key, no model_path.
  CHECK(error(kServerArgs.substr(0, kServerArgs.size() / 2)).second == "F:7");
  CHECK(error(with(kServerArgs, "dtype='bfloat16'", "dtype='bfloat16")).second == "F:7");
  CHECK(error(with(kServerArgs, "port=30000", "30000")).second == "F:7");
  CHECK(error(with(kServerArgs, "port=30000", "port=")).second == "F:7");
  CHECK(error("server_args=ServerArgs(tp_size=8)").first.find("model_path") != std::string::npos);

  // In a log: the line number is the log's, decode lines point at the launch above them.
  const std::string log = "SGLang\n" + with(kServerArgs, "tp_size=2", "tp_size=two") + "\n";
  try {
    parse_sglang_log(log + "Decode batch, #running-req: 1, gen throughput (token/s): 10\n", "L");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.where() == "L:2");
    CHECK(std::string(e.what()).find("tp_size") != std::string::npos);
  }
  const auto two = parse_sglang_log("Decode batch, #running-req: 1, gen throughput (token/s): 10\n" + kServerArgs +
                                        "\nDecode batch, #running-req: 3, gen throughput (token/s): 30, cuda graph: "
                                        "True\n" +
                                        with(kServerArgs, "tp_size=2", "tp_size=4") +
                                        "\nDecode batch, #running-req: 1, gen throughput (token/s): 20\n",
                                    "L");
  REQUIRE(two.server_args.size() == 2);
  CHECK(two.server_args[1].tp_size == 4);
  REQUIRE(two.decode.size() == 3);
  CHECK_FALSE(two.decode[0].server_args_index.has_value());
  CHECK(two.decode[1].server_args_index == std::size_t{0});
  CHECK(two.decode[1].running_req == 3);
  CHECK(two.decode[1].cuda_graph == true);
  CHECK(two.decode[2].server_args_index == std::size_t{1});
}
