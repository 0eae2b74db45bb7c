// Expert parallelism and DP attention: the all-to-all and reduce-scatter priced by hand, the
// plan's ops and payloads under the layout, DP-rank log lines summed per window, and the CLI.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "cost/deepep_model.h"
#include "cost/nccl_alltoall.h"
#include "cost/nccl_model.h"
#include "diagnose/dp_rank_windows.h"
#include "ingest/sglang_log.h"
#include "ingest/sglang_rank_tag.h"
#include "plan/cycle_plan.h"
#include "scenario/hardware.h"
#include "scenario/model_spec.h"
#include "scenario/paths.h"
#include "test_util.h"
#include "util/error.h"

using namespace specsim;

namespace {

struct Zoo {
  ModelSpec target, draft;
};
Zoo deepseek() {
  const std::string cfg = resolve_model_config("deepseek-v3", "--model-path");
  return {model_from_config(cfg, "--model-path"), model_from_config(zoo_draft_config(cfg), "draft")};
}

RunSpec dp_run(A2aBackend a2a) {
  RunSpec r;
  r.tp_size = 8, r.batch_size = 32, r.num_steps = 3, r.topk = 1, r.num_draft_tokens = 4;
  r.layout.dp_attention = true, r.layout.dp = 8, r.layout.ep = 8, r.layout.a2a = a2a;
  return r;
}

std::vector<const Op*> ops_of(const PhasePlan& p, OpKind k, const std::string& name) {
  std::vector<const Op*> out;
  for (const auto& b : p.blocks)
    for (const auto& o : b.ops)
      if (o.kind == k && name == o.name) out.push_back(&o);
  return out;
}

}  // namespace

TEST_CASE("NCCL all-to-all: one step's latency plus the (n-1)/n that leaves the GPU, by hand") {
  const Hardware hw = load_hardware("h200:nvswitch", 8);
  const NcclSettings s;
  const double bytes = 1 << 20;
  const double busbw = std::min(hw.topo.nccl_p2p_busbw_gbps, hw.link_bw_gbps());
  const double want = hw.nccl.base_latency_us[kRing][kSimple] + hw.nccl.hop_latency_us[0][kRing][kSimple] +
                      bytes * 7.0 / 8.0 / (busbw * 1e3);
  CHECK(nccl_alltoall_us(bytes, 8, hw, s) == Approx(want));
  CHECK(nccl_alltoall_us(bytes, 1, hw, s) == 0);
  // twice the bytes: the latency once, the transfer twice
  CHECK(nccl_alltoall_us(2 * bytes, 8, hw, s) - nccl_alltoall_us(bytes, 8, hw, s) ==
        Approx(bytes * 7.0 / 8.0 / (busbw * 1e3)));
}

TEST_CASE("reduce-scatter is priced as the all-gather of the same bytes (the same ring traffic)") {
  const Hardware hw = load_hardware("h200:nvswitch", 8);
  const NcclSettings s;
  for (double b : {16.0 * 1024, 1835008.0})
    CHECK(nccl_reduce_scatter_us(b, 8, hw, s) == Approx(nccl_allgather(b, 8, hw, s).us));
}

TEST_CASE("DeepEP low latency: the published point, scaled bytes, EP interpolated; normal: bytes / bandwidth") {
  const DeepEPModel& m = deepep_model();
  // the table's own setting: 128 tokens x top-8 x 7168 x (1 + 4/128) B dispatched, x 2 B combined
  CHECK(m.table_bytes(false) == Approx(128.0 * 8 * 7168 * (1.0 + 4.0 / 128.0)));
  CHECK(m.table_bytes(true) == Approx(128.0 * 8 * 7168 * 2.0));
  CHECK(m.us(m.table_bytes(false), 8, false, true) == Approx(77.0));
  CHECK(m.us(m.table_bytes(true), 8, true, true) == Approx(114.0));
  // an eighth of the bytes: fixed 15 + (77 - 15) / 8
  CHECK(m.us(m.table_bytes(false) / 8, 8, false, true) == Approx(15.0 + 62.0 / 8));
  // EP 12: log2-linear between EP 8 (77 us) and EP 16 (118 us)
  CHECK(m.table_us(12, false) == Approx(77.0 + (std::log2(12.0) - 3.0) * 41.0));
  CHECK(m.table_us(4, false) == Approx(77.0));  // below the table: EP 8's
  // normal: fixed 20 + bytes / 153 GB/s
  CHECK(m.us(153e6, 8, false, false) == Approx(20.0 + 1000.0));
  CHECK(m.us(1e6, 1, false, true) == 0);
}

TEST_CASE("DP attention + DeepEP: dispatch and combine per MoE layer with the rank's tokens") {
  const Zoo z = deepseek();
  const CyclePlan plan = build_plan(z.target, &z.draft, dp_run(A2aBackend::DeepEP));
  const PhasePlan* v = plan.find(PhaseKind::Verify);
  REQUIRE(v);
  const int moe_layers = z.target.layers - z.target.moe.first_dense_layers;  // 58
  CHECK(v->count_of(OpKind::AllToAll) == 2 * moe_layers);
  // 32 requests over 8 DP ranks: 4 each x 4 draft tokens = 16 tokens a rank (attn tp 1)
  const auto dispatch = ops_of(*v, OpKind::AllToAll, "moe_dispatch");
  const auto combine = ops_of(*v, OpKind::AllToAll, "moe_combine");
  REQUIRE(dispatch.size() == 1);
  REQUIRE(combine.size() == 1);
  CHECK(dispatch[0]->comm_bytes == Approx(16.0 * 8 * 7168 * (1.0 + 4.0 / 128.0)));  // 946176 B
  CHECK(combine[0]->comm_bytes == Approx(16.0 * 8 * 7168 * 2.0));                   // 1835008 B
  CHECK(combine[0]->combine);
  CHECK_FALSE(dispatch[0]->combine);
  // no all-reduce left: attention runs on one GPU a DP rank, the MoE sums in the combine
  CHECK(v->count_of(OpKind::AllReduce) == 0);
  // each rank's expert GEMM: 128 group tokens x top-8 / ep 8 = 128 pairs over its 32 experts
  const auto w13 = ops_of(*v, OpKind::MoeGemm, "moe_w13");
  REQUIRE(w13.size() == 1);
  CHECK(w13[0]->m == Approx(128.0));
  CHECK(w13[0]->experts <= 32.0);
  CHECK(w13[0]->n == Approx(2.0 * z.target.moe.intermediate));  // ep = tp: each expert whole
  // the dense layers and the LM head gather every DP rank's tokens: 8 x 16 tokens x 7168 x 2 B
  const auto gather = ops_of(*v, OpKind::AllGather, "dp_gather");
  const auto scatter = ops_of(*v, OpKind::ReduceScatter, "dp_reduce_scatter");
  REQUIRE(gather.size() == 1);
  REQUIRE(scatter.size() == 1);
  CHECK(gather[0]->comm_bytes == Approx(128.0 * 7168 * 2));
  CHECK(scatter[0]->comm_bytes == Approx(128.0 * 7168 * 2));
  CHECK(plan.group_of(*gather[0]) == 8);
  // the EAGLE-3 draft runs on the rank's own requests over its attention group of one GPU: no collective
  for (PhaseKind k : {PhaseKind::DraftDecode, PhaseKind::DraftExtend}) {
    const PhasePlan* d = plan.find(k);
    REQUIRE(d);
    CHECK(d->count_of(OpKind::AllReduce) == 0);
    CHECK(d->count_of(OpKind::AllGather) == 0);
    CHECK(d->tokens == (k == PhaseKind::DraftDecode ? 32 : 32 * 4));
  }
}

TEST_CASE("DP attention without an all-to-all: gather, experts split ep ways, reduce-scatter per layer") {
  const Zoo z = deepseek();
  const CyclePlan plan = build_plan(z.target, &z.draft, dp_run(A2aBackend::None));
  const PhasePlan* b = plan.find(PhaseKind::BaselineDecode);
  REQUIRE(b);
  CHECK(b->count_of(OpKind::AllToAll) == 0);
  // every layer: one gather before the MLP, one reduce-scatter after; plus the LM head's gather
  CHECK(b->count_of(OpKind::ReduceScatter) == z.target.layers);
  const auto gather = ops_of(*b, OpKind::AllGather, "dp_gather");
  REQUIRE(gather.size() == 2);                              // the dense layers' block and the MoE layers' block
  CHECK(gather[0]->comm_bytes == Approx(32.0 * 7168 * 2));  // 4 requests x 8 ranks, one token each
  CHECK(ops_of(*b, OpKind::AllGather, "lm_head_dp_gather").size() == 1);
  CHECK(b->count_of(OpKind::AllReduce) == 0);
}

TEST_CASE("DeepEP low latency refuses more than 128 tokens a rank, naming --batch-size") {
  const Zoo z = deepseek();
  RunSpec r = dp_run(A2aBackend::DeepEP);
  r.batch_size = 8 * 33;  // 33 requests a rank x 4 draft tokens = 132 > 128
  CHECK_THROWS_WITH(build_plan(z.target, &z.draft, r), Catch::Contains("at most 128 tokens per rank"));
}

TEST_CASE("parse_layout: SGLang's rules, said by flag") {
  std::vector<std::string> notes;
  ParallelArgs a;
  a.dp_size = 8;
  CHECK_THROWS_WITH(parse_layout(a, 8, 256, notes), Catch::Contains("without --enable-dp-attention"));
  a.enable_dp_attention = true, a.dp_size = 3;
  CHECK_THROWS_WITH(parse_layout(a, 8, 256, notes), Catch::Contains("does not divide tp"));
  ParallelArgs e;
  e.moe_a2a_backend = "deepep", e.ep_size = 4;
  const ParallelLayout l = parse_layout(e, 8, 256, notes);
  CHECK(l.ep == 8);  // DeepEP: ep = tp, as SGLang sets, with a note
  CHECK(notes.back().find("--ep-size 4 -> 8") != std::string::npos);
  ParallelArgs dense;
  dense.ep_size = 2;
  CHECK_THROWS_WITH(parse_layout(dense, 8, 0, notes), Catch::Contains("no MoE layers"));
  ParallelArgs imb;
  imb.ep_size = 8, imb.ep_imbalance = 9;
  CHECK_THROWS_WITH(parse_layout(imb, 8, 256, notes), Catch::Contains("outside [1, ep = 8]"));
}

TEST_CASE("the DP rank tag of a decode line") {
  using ingest::find_dp_rank;
  CHECK(find_dp_rank("[2025-09-10 12:00:10 DP3 TP3] ") == 3);
  CHECK(find_dp_rank("[2025-09-10 12:00:10 DP12 TP12 EP12] ") == 12);
  CHECK_FALSE(find_dp_rank("[2025-09-10 12:00:10 TP0] ").has_value());
  CHECK_FALSE(find_dp_rank("[2025-09-10 12:00:10] ").has_value());
  CHECK_FALSE(find_dp_rank("[x DPX TP1] ").has_value());
}

TEST_CASE("DP-rank decode lines are summed per window, not read one rank for the server") {
  const std::string path = test::traces_path("../tests/data/sglang-dp-attention-synthetic.log");
  const auto log = ingest::parse_sglang_log(test::slurp(path), path);
  REQUIRE(log.decode.size() == 24);
  CHECK(log.decode[3].dp_rank == 3);
  // each rank's interval is from its own previous line (4 s), not the other ranks' lines
  REQUIRE(log.decode[8].since_previous_s);
  CHECK(*log.decode[8].since_previous_s == Approx(4.0));
  CHECK(dp_ranks_in(log) == 8);
  const auto sum = sum_dp_ranks(log);
  REQUIRE(sum.decode.size() == 3);
  // ranks 0,2,4,6 run 4 requests, 1,3,5,7 run 5; rank r logs 100 + 10 r + window tok/s
  CHECK(sum.decode[0].running_req == 4 * 4 + 4 * 5);
  CHECK(sum.decode[0].gen_tok_s == Approx(8 * 100.0 + 10.0 * 28));
  CHECK(sum.decode[1].gen_tok_s == Approx(8 * 101.0 + 10.0 * 28));
  CHECK(*sum.decode[1].accept_len == Approx(3.1));
  CHECK_FALSE(sum.decode[0].dp_rank.has_value());
}

TEST_CASE("the DeepSeek-V3 DP attention + DeepEP command runs with all-to-all ops in report and trace") {
  const std::string dir = test::fresh_dir();
  const auto r = test::run_specsim({"run",
                                    "--hardware",
                                    "h200:nvswitch",
                                    "--batch-size",
                                    "32",
                                    "--accept-len",
                                    "3",
                                    "--trace",
                                    dir + "/t.json",
                                    "--",
                                    "python",
                                    "-m",
                                    "sglang.launch_server",
                                    "--model-path",
                                    "deepseek-ai/DeepSeek-V3",
                                    "--tp",
                                    "8",
                                    "--enable-dp-attention",
                                    "--dp",
                                    "8",
                                    "--ep-size",
                                    "8",
                                    "--moe-a2a-backend",
                                    "deepep",
                                    "--speculative-algorithm",
                                    "EAGLE3",
                                    "--speculative-num-steps",
                                    "3",
                                    "--speculative-eagle-topk",
                                    "1",
                                    "--speculative-num-draft-tokens",
                                    "4"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("all-to-all  116 ops") != std::string::npos);
  CHECK(r.out.find("modelled  --enable-dp-attention") != std::string::npos);
  CHECK(test::slurp(dir + "/t.json").find("\"all_to_all\"") != std::string::npos);
  const auto bad =
      test::run_specsim({"run", "--hardware", "h200:nvswitch", "--accept-len", "3", "--", "python", "-m",
                         "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8", "--dp", "8"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--dp-size") != std::string::npos);
}

TEST_CASE("diagnose sums a DP-attention log's ranks and runs the scenario with DP attention") {
  const std::string log = test::traces_path("../tests/data/sglang-dp-attention-synthetic.log");
  const auto r = test::run_specsim({"diagnose", log, "--hardware", "h200:nvswitch", "--model", "deepseek-v3",
                                    "--tp-size", "8", "--speculative-algorithm", "EAGLE3", "--speculative-num-steps",
                                    "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("3 decode lines") != std::string::npos);
  CHECK(r.out.find("#running-req 36") != std::string::npos);       // 4 x 4 + 4 x 5 requests, not one rank's 4
  CHECK(r.out.find("median 1088.00 tok/s") != std::string::npos);  // the middle window's sum
  CHECK(r.out.find("dp-ranks-summed") != std::string::npos);
  CHECK(r.out.find("were the gap all-reduce time") == std::string::npos);  // DP attention: no all-reduce to blame
}

TEST_CASE("--ep-size without an all-to-all: experts split ep ways, the all-reduce stays, imbalance scales the pairs") {
  const Zoo z = deepseek();
  RunSpec tp = dp_run(A2aBackend::None);
  tp.layout = ParallelLayout{};
  tp.batch_size = 8;
  RunSpec ep = tp;
  ep.layout.ep = 8;
  const CyclePlan a = build_plan(z.target, &z.draft, tp), b = build_plan(z.target, &z.draft, ep);
  const PhasePlan *pa = a.find(PhaseKind::BaselineDecode), *pb = b.find(PhaseKind::BaselineDecode);
  CHECK(pb->count_of(OpKind::AllReduce) == pa->count_of(OpKind::AllReduce));
  CHECK(pb->count_of(OpKind::AllToAll) == 0);
  const auto w13 = ops_of(*pb, OpKind::MoeGemm, "moe_w13");
  REQUIRE(w13.size() == 1);
  CHECK(w13[0]->m == Approx(8.0 * 8 / 8));                      // 8 tokens x top-8 over 8 ranks
  CHECK(w13[0]->n == Approx(2.0 * z.target.moe.intermediate));  // tp / ep = 1: each expert whole
  const auto shared = ops_of(*pb, OpKind::Gemm, "shared_gate_up_proj");
  REQUIRE(shared.size() == 1);
  CHECK(shared[0]->n == Approx(2.0 * z.target.moe.intermediate * z.target.moe.shared_experts / 8));
  ep.layout.ep_imbalance = 2;
  const CyclePlan c = build_plan(z.target, &z.draft, ep);
  CHECK(ops_of(*c.find(PhaseKind::BaselineDecode), OpKind::MoeGemm, "moe_w13")[0]->m == Approx(2.0 * 8));
}

TEST_CASE("NCCL all-to-all backend: bf16 dispatch and combine of the rank's share") {
  const Zoo z = deepseek();
  RunSpec r = dp_run(A2aBackend::Nccl);
  r.layout.dp_attention = false, r.layout.dp = 1;  // attention tp 8: each rank routes 1/8 of the tokens
  const CyclePlan plan = build_plan(z.target, &z.draft, r);
  const PhasePlan* v = plan.find(PhaseKind::Verify);
  // 32 requests x 4 tokens = 128 over 8 ranks: 16 tokens a rank, reduce-scattered to it after attention
  const auto dispatch = ops_of(*v, OpKind::AllToAll, "moe_dispatch");
  REQUIRE(dispatch.size() == 1);
  CHECK(dispatch[0]->comm_bytes == Approx(16.0 * 8 * 7168 * 2));
  const auto rs = ops_of(*v, OpKind::ReduceScatter, "attn_reduce_scatter");
  REQUIRE(rs.size() == 1);
  CHECK(rs[0]->comm_bytes == Approx(128.0 * 7168 * 2));
  CHECK(ops_of(*v, OpKind::AllGather, "attn_all_gather").size() == 1);
}
