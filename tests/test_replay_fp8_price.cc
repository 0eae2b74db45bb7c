// The price `specsim replay` predicts its own block-scaled fp8 GEMM with (cost/replay_fp8_cost.h),
// its fit (calibrate/replay_fp8_fit.h) and `specsim calibrate --gemmbench`: the terms by hand, a
// fit that recovers known coefficients, the shipped H200 price against the committed bench rows it
// was fitted to, the engine using it only for a replay's prediction, and bad input refused.
#include <catch2/catch.hpp>

#include "calibrate/replay_fp8_fit.h"
#include "cost/compute_cost.h"
#include "scenario/hardware.h"
#include "test_util.h"
#include "util/error.h"

using namespace specsim;
using namespace specsim::test;

namespace {

Op fp8_gemm(double m, double n, double k) {
  Op op;
  op.kind = OpKind::Gemm;
  op.dtype = DType::FP8;
  op.m = m, op.n = n, op.k = k;
  op.flops = 2 * m * n * k;
  op.bytes = n * k;
  return op;
}

const std::string kBench = "gemmbench/block-fp8-replay-kernel-h200-2026-12-02.json";

}  // namespace

TEST_CASE("replay fp8 terms: a dense GEMM and DeepSeek's expert GEMM by hand") {
  // 2112 x 7168 at M = 4: 15.14 MB in the M <= 8 class, 132 tiles of 16 rows, 56 K blocks
  const auto t = replay_fp8_terms(replay_gemm_dims(fp8_gemm(4, 2112, 7168)));
  CHECK(t[0] == 1);
  CHECK(t[1] == Approx(2112.0 * 7168 / 1e6));
  CHECK(t[2] == 0);
  CHECK(t[5] == Approx(0.132));
  CHECK(t[6] == 56);
  // expert down projection: 36 token-expert pairs over 31.5 experts -> 32 experts of 2 rows
  Op moe = fp8_gemm(36, 7168, 256);
  moe.kind = OpKind::MoeGemm;
  moe.experts = 31.53;
  const ReplayGemmDims d = replay_gemm_dims(moe);
  CHECK(d.batch == 32);
  CHECK(d.m == 2);
  const auto tm = replay_fp8_terms(d);
  CHECK(tm[1] == Approx(32 * 7168.0 * 256 / 1e6));
  CHECK(tm[5] == Approx(32 * 448 / 1000.0));
  CHECK(tm[6] == 2);
  // M = 100: the 64-token class, two passes each reading W again
  const auto t100 = replay_fp8_terms(replay_gemm_dims(fp8_gemm(100, 4096, 7168)));
  CHECK(t100[4] == Approx(2 * 4096.0 * 7168 / 1e6));
  CHECK(t100[1] + t100[2] + t100[3] == 0);
}

TEST_CASE("replay fp8 fit: rows made from known coefficients give them back") {
  ReplayFp8Kernel truth;
  truth.present = true;
  truth.coef = {3.0, 0.4, 0.7, 1.1, 1.8, 2.5, 0.02};
  std::vector<ReplayFp8Row> rows;
  for (std::int64_t m : {1, 4, 8, 16, 32, 64})
    for (std::int64_t n : {512, 2112, 7168})
      for (std::int64_t k : {256, 2048, 7168}) {
        const ReplayGemmDims d{m, n, k, n == 512 ? 9 : 1};
        rows.push_back({"row", d, replay_fp8_us(truth, d)});
      }
  const ReplayFp8Fit fit = fit_replay_fp8(rows, "test");
  for (int i = 0; i < kReplayFp8Terms; ++i)
    CHECK(fit.kernel.coef[std::size_t(i)] == Approx(truth.coef[std::size_t(i)]).epsilon(1e-6));
  CHECK(fit.worst_pct < 1e-6);
  CHECK_THROWS_AS(fit_replay_fp8({rows.begin(), rows.begin() + 3}, "test"), InputError);
}

TEST_CASE("the shipped H200 replay price reproduces the committed bench rows it was fitted to") {
  const Hardware hw = load_hardware("h200:nvswitch", 1);
  REQUIRE(hw.gpu.replay_block_fp8.present);
  const auto rows = gemmbench_rows(traces_path(kBench));
  REQUIRE(rows.size() >= 80);
  std::vector<double> errs;
  double worst_moe = 0;
  for (const auto& r : rows) {
    const double e = std::abs(replay_fp8_us(hw.gpu.replay_block_fp8, r.dims) - r.us) / r.us;
    errs.push_back(e);
    if (r.dims.batch > 1) worst_moe = std::max(worst_moe, e);
  }
  std::sort(errs.begin(), errs.end());
  CHECK(errs[errs.size() / 2] < 0.10);  // the fit's median: 8.3%
  CHECK(errs.back() < 0.30);            // worst 25.8% (M = 64)
  CHECK(worst_moe < 0.15);              // expert GEMMs, the bulk of a DeepSeek verify
}

TEST_CASE("the engine prices fp8 GEMMs as the replay's kernel only for a replay's prediction") {
  Hardware hw = load_hardware("h200:nvswitch", 1);
  const Op op = fp8_gemm(4, 2112, 7168);
  const double stack = compute_us(op, hw.gpu);
  hw.gpu.price_as_replay_fp8 = true;
  const double replay = compute_us(op, hw.gpu);
  CHECK(replay == Approx(replay_fp8_us(hw.gpu.replay_block_fp8, replay_gemm_dims(op))));
  CHECK(replay != Approx(stack));
  Op bf16 = op;
  bf16.dtype = DType::BF16;
  hw.gpu.price_as_replay_fp8 = false;
  const double plain = compute_us(bf16, hw.gpu);
  hw.gpu.price_as_replay_fp8 = true;
  CHECK(compute_us(bf16, hw.gpu) == Approx(plain));  // not an fp8 GEMM: unchanged
}

TEST_CASE("specsim calibrate --gemmbench writes a profile the replay's price reads back") {
  const std::string dir = fresh_dir(), out = dir + "/h200-fit.json";
  const auto r =
      run_specsim({"calibrate", "--gemmbench", traces_path(kBench), "--hardware", "h200:nvswitch", "-o", out});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("80 rows fitted") != std::string::npos);
  const Hardware hw = load_hardware(out, 1);
  REQUIRE(hw.gpu.replay_block_fp8.present);
  const Hardware shipped = load_hardware("h200:nvswitch", 1);
  for (int i = 0; i < kReplayFp8Terms; ++i)  // the shipped block is this fit, rounded
    CHECK(hw.gpu.replay_block_fp8.coef[std::size_t(i)] ==
          Approx(shipped.gpu.replay_block_fp8.coef[std::size_t(i)]).epsilon(0.01).margin(1e-3));
  // the profile runs
  CHECK(run_specsim({"run", "--hardware", out, "--model-path", "deepseek-v3", "--tp-size", "8", "--accept-len", "2"})
            .exit_code == 0);
}

TEST_CASE("specsim calibrate --gemmbench refuses what is not a gemmbench file, writing nothing") {
  const std::string dir = fresh_dir(), out = dir + "/p.json";
  // the Triton bench's rows (another kernel, another format) are not this mode's input
  auto r = run_specsim({"calibrate", "--gemmbench", traces_path("gemmbench/block-fp8-h200-2026-12-01.json"),
                        "--hardware", "h200:nvswitch", "-o", out});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("not a specsim-gemmbench --json file") != std::string::npos);
  CHECK_FALSE(exists(out));
  const std::string bad = dir + "/bad.json";
  write_text(bad, R"({"kind": "specsim-gemmbench", "rows": [{"shape": "x", "n": 7168, "k": 256, "m": 0, "batch": 1,
                      "block_fp8_us": 3}]})");
  r = run_specsim({"calibrate", "--gemmbench", bad, "--hardware", "h200:nvswitch", "-o", out});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("rows[0].m") != std::string::npos);
  CHECK_FALSE(exists(out));
  r = run_specsim({"calibrate", "--gemmbench", bad, "--nccl-tests", bad, "--hardware", "h200:nvswitch", "-o", out});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("give one mode") != std::string::npos);
}
