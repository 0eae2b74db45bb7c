// Bandwidth conversions (cost/bus_bandwidth.h) by hand and against a real nccl-tests log, and the
// lookup of a measured NCCL curve's piece (cost/nccl_curve_cost.h) that the NCCL model and the
// calibration share.
#include <catch2/catch.hpp>

#include "cost/bus_bandwidth.h"
#include "cost/nccl_curve_cost.h"
#include "cost/nccl_model.h"
#include "ingest/nccl_tests.h"
#include "ingest/text_lines.h"
#include "scenario/hardware.h"
#include "test_util.h"

using namespace specsim;
using namespace specsim::test;

TEST_CASE("busbw = algbw x 2(n-1)/n, by hand") {
  CHECK(allreduce_busbw_gbps(100, 8) == Approx(175));  // 100 x 14/8
  CHECK(allreduce_algbw_gbps(175, 8) == Approx(100));
  CHECK(allreduce_busbw_gbps(90, 4) == Approx(135));  // 90 x 6/4
  CHECK(allreduce_algbw_gbps(135, 4) == Approx(90));
  CHECK(allreduce_busbw_gbps(100, 2) == 100);  // two ranks: each sends and receives half twice
  CHECK(allreduce_algbw_per_busbw(8) == Approx(8.0 / 14));
  CHECK(allreduce_busbw_gbps(100, 1) == 0);  // one rank: nothing crosses a bus
  for (int n : {2, 3, 4, 8, 16}) CHECK(allreduce_algbw_gbps(allreduce_busbw_gbps(123.4, n), n) == Approx(123.4));
}

TEST_CASE("GB/s and microseconds, by hand") {
  CHECK(bytes_per_us(200) == 2e5);
  CHECK(us_per_byte(200) == Approx(5e-6));
  CHECK(gbps_of_us_per_byte(5e-6) == Approx(200));
  CHECK(gbps_of(1e6, 10) == Approx(100));  // 1 MB in 10 us
  CHECK(transfer_us(1e6, 100) == Approx(10));
}

TEST_CASE("the conversions give what nccl-tests printed: algbw and busbw from size and time") {
  const std::string f = traces_path("nccl-tests-a100sxm4x8-nvlink.txt");
  const auto log = ingest::parse_nccl_tests(ingest::read_text(f, "log"), f);
  REQUIRE(log.tables.size() == 1);
  const int n = log.tables[0].world();
  REQUIRE(n == 8);
  for (const auto& r : log.tables[0].rows) {
    INFO(r.bytes);
    const double busbw = allreduce_busbw_gbps(gbps_of(r.bytes, r.oop_us), n);
    // The log rounds time to 0.01 us and busbw to 0.01 GB/s.
    CHECK(std::abs(busbw - r.oop_busbw_gbps) <= 0.005 + busbw * 0.005 / r.oop_us + 1e-9);
  }
}

TEST_CASE("a measured curve's piece: first range that holds the size, the last beyond; only at its world") {
  const NcclFit fit{2, {{8, 4096, 5.0, 0}, {4096, 1e6, 6.0, 150}, {1e6, 1e10, 12, 360}}, "test"};
  CHECK(nccl_fit_piece(fit, 100, 2) == &fit.pieces[0]);
  CHECK(nccl_fit_piece(fit, 4096, 2) == &fit.pieces[0]);  // a shared boundary belongs to the lower range
  CHECK(nccl_fit_piece(fit, 5000, 2) == &fit.pieces[1]);
  CHECK(nccl_fit_piece(fit, 1, 2) == &fit.pieces[0]);     // below the log
  CHECK(nccl_fit_piece(fit, 2e10, 2) == &fit.pieces[2]);  // beyond the log
  CHECK(nccl_fit_piece(fit, 5000, 4) == nullptr);
  CHECK(nccl_fit_piece(NcclFit{2, {}, "empty"}, 5000, 2) == nullptr);
  // 6 us + 3e5 B / (150 GB/s busbw = 150 GB/s algbw at 2 ranks) = 6 + 2 us; latency only below 4 KiB.
  CHECK(nccl_fit_us(fit, 3e5) == Approx(8));
  CHECK(nccl_fit_us(fit, 1000) == 5);
  // At 4 ranks the same busbw is 150 x 4/6 = 100 GB/s algbw: 6 + 3 us.
  CHECK(nccl_fit_piece_us(fit.pieces[1], 3e5, 4) == Approx(9));

  // The NCCL model prices through the same piece at the fit's world, the tuning model elsewhere.
  Hardware hw = load_hardware("h200:nvswitch", 2);
  hw.topo.nccl_fit = fit;
  const NcclEstimate e = nccl_allreduce(3e5, 2, hw, NcclSettings{});
  CHECK(e.fitted);
  CHECK(e.us == Approx(8));
  CHECK_FALSE(nccl_allreduce(3e5, 4, hw, NcclSettings{}).fitted);
}
