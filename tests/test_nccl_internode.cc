// NCCL's all-reduce across nodes (ncclTopoTuneModel's inter-node terms) against values computed by
// hand from models/nccl/tuning.json and the cluster topologies; the node count's checks.
#include <catch2/catch.hpp>
#include <functional>
#include <string>

#include "cost/custom_ar_model.h"
#include "cost/nccl_model.h"
#include "util/error.h"

using namespace specsim;

namespace {

Hardware cluster(const std::string& spec, int gpus, int nodes) {
  Hardware hw = load_hardware(spec, gpus);
  set_nodes(hw, nodes, "--tp-size");
  return hw;
}

NcclSettings only(int algo, int proto) {
  NcclSettings s;
  s.algo_enabled = {algo == kTree, algo == kRing};
  s.proto_enabled = {proto == kLL, proto == kLL128, proto == kSimple};
  return s;
}

}  // namespace

TEST_CASE("NCCL across 2 nodes x 8 H200 (NDR IB): every pair's latency by hand") {
  const Hardware hw = cluster("h200:nvswitch-ib", 16, 2);
  CHECK(hw.gpus_per_node() == 8);
  CHECK(hw.nodes_spanned(16) == 2);
  // 16 ranks, 30 ring steps of which 2(nodes-1) = 2 cross the network; the 28 others pay at least
  // the Intel host's 1.0 us network overhead (x3 for Simple). NET per-hop: ring 2.7/4.0/14,
  // tree 5.0/8.5/14; the tree: 2 x (7 NVLink hops + log2(2) = 1 network hop).
  const double hand_us[kNumAlgos][kNumProtos] = {
      {6.8 + 2 * (7 * 0.6 + 1 * 5.0), 14.0 + 2 * (7 * 1.25 + 8.5), 8.4 + 2 * (7 * 4.0 + 14.0)},  // 25.2, 48.5, 92.4
      {6.6 + 28 * 1.0 + 2 * 2.7, 14.0 + 28 * 1.9 + 2 * 4.0, 8.4 + 28 * 3.4 + 2 * 14.0}};         // 40.0, 75.2, 131.6
  for (int a = 0; a < kNumAlgos; ++a)
    for (int p = 0; p < kNumProtos; ++p) {
      const auto e = nccl_allreduce(8192, 16, hw, only(a, p));
      INFO(a << "/" << p);
      CHECK(e.algo == a);
      CHECK(e.proto == p);
      CHECK(e.nodes == 2);
      CHECK(e.latency_us == Approx(hand_us[a][p]).epsilon(1e-9));
    }
  // busBw: min(370 NVLink ring busBw, 450 link, 8 NICs x 47 GB/s = 376) = 370. Tree LL at 8 KB:
  // min(39.0 Intel 2-node LL cap, 0.92 x 370 / 3.8) x 0.5 = 19.5 GB/s of algorithm bandwidth.
  const auto small = nccl_allreduce(8192, 16, hw, NcclSettings{});
  CHECK(small.algo == kTree);
  CHECK(small.proto == kLL);
  CHECK(small.us == Approx(25.2 + 8192 / (39.0 * 0.5 * 1e3)).epsilon(1e-9));
  // 256 MB: ring Simple, 131.6 us + bytes / (370 x 16/30).
  const double big = 256.0 * 1024 * 1024;
  const auto large = nccl_allreduce(big, 16, hw, NcclSettings{});
  CHECK(large.algo == kRing);
  CHECK(large.proto == kSimple);
  CHECK(large.us == Approx(131.6 + big / (370 * 16.0 / 30.0 * 1e3)).epsilon(1e-9));
}

TEST_CASE("NCCL across 4 nodes: log2(nodes) tree hops, 2(nodes-1) ring network steps, the >2-node LL cap") {
  const Hardware hw = cluster("h200:nvswitch-ib", 32, 4);
  const auto tree = nccl_allreduce(8192, 32, hw, only(kTree, kLL));
  CHECK(tree.latency_us == Approx(6.8 + 2 * (7 * 0.6 + 2 * 5.0)).epsilon(1e-9));  // 35.2
  CHECK(tree.us == Approx(35.2 + 8192 / (20.4 * 0.5 * 1e3)).epsilon(1e-9));
  const auto ring = nccl_allreduce(8192, 32, hw, only(kRing, kLL));
  CHECK(ring.latency_us == Approx(6.6 + 56 * 1.0 + 6 * 2.7).epsilon(1e-9));  // 78.8
  CHECK(ring.us == Approx(78.8 + 8192 / (20.4 * 32.0 / 62.0 * 1e3)).epsilon(1e-9));
}

TEST_CASE("NCCL across nodes: one rank per node takes the tree's NET latency; an AMD host's 2 us overhead") {
  const Hardware one = cluster("h200:nvswitch-ib", 2, 2);
  const auto e = nccl_allreduce(8192, 2, one, only(kRing, kLL));
  CHECK(e.latency_us == Approx(6.6 + 2 * 5.0).epsilon(1e-9));
  // One GPU per node drives one NIC: busBw 47 GB/s; LL: min(39, 23.5) x 2/2.
  CHECK(e.busbw_gbps == Approx(23.5).epsilon(1e-9));
  CHECK(e.us == Approx(16.6 + 8192 / (23.5 * 1e3)).epsilon(1e-9));

  Hardware amd = cluster("h200:nvswitch-roce", 16, 2);
  amd.topo.amd_cpu = true;
  CHECK(nccl_allreduce(8192, 16, amd, only(kRing, kLL)).latency_us == Approx(6.6 + 28 * 2.0 + 2 * 2.7).epsilon(1e-9));
  CHECK(nccl_allreduce(8192, 16, amd, only(kRing, kSimple)).latency_us ==
        Approx(8.4 + 28 * 6.0 + 2 * 14.0).epsilon(1e-9));
}

TEST_CASE("NCCL within one node of a cluster is the one-node model; the custom all-reduce does not span nodes") {
  const Hardware cl = cluster("h200:nvswitch-ib", 16, 2);
  const Hardware box = load_hardware("h200:nvswitch", 8);
  const auto in = nccl_allreduce(8192, 8, cl, NcclSettings{});
  CHECK(in.nodes == 1);
  CHECK(in.us == Approx(nccl_allreduce(8192, 8, box, NcclSettings{}).us).epsilon(1e-12));
  CHECK(custom_refusal(cl, 8, 8192).empty());
  const Hardware tp4 = cluster("h200:nvswitch-ib", 4, 2);
  const std::string why = custom_refusal(tp4, 4, 8192);
  CHECK_THAT(why, Catch::Contains("does not span nodes"));
  CHECK_THAT(why, Catch::Contains("--nnodes 2"));
}

TEST_CASE("--nnodes: a one-node topology, an uneven split and too many GPUs per node are refused") {
  auto field_of = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const InputError& e) {
      return e.where();
    }
    return std::string("no error");
  };
  CHECK(field_of([] { cluster("h200:nvswitch", 16, 2); }) == "--nnodes");
  CHECK(field_of([] { cluster("h200:nvswitch-ib", 15, 2); }) == "--nnodes");
  CHECK(field_of([] { cluster("h200:nvswitch-ib", 16, 1); }) == "--tp-size");
  CHECK(field_of([] { cluster("h200:nvswitch-ib", 8, 100); }) == "--nnodes");
  CHECK(field_of([] { cluster("h200:nvswitch-ib", 24, 3); }) == "no error");
}
