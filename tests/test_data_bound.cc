// The bound a family's own measurements set on a prediction from its anchor
// (validate/data_bound.h), and where `validate --transfer` reports it.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "test_util.h"
#include "validate/data_bound.h"
#include "validate/transfer.h"

using namespace specsim;

namespace {

// An anchor of hand-checkable figures: (3, 1, 4) at bs 1, 300 tok/s at accept length 3 (a 10 ms
// cycle), plain decode 150 tok/s (a 6.67 ms step).
PublishedCase anchor_case() {
  PublishedCase a;
  a.id = "anchor";
  a.algorithm = "EAGLE3";
  a.batch_size = 1, a.num_steps = 3, a.topk = 1, a.num_draft_tokens = 4;
  a.baseline_tok_s = 150, a.spec_tok_s = 300, a.accept_length = 3;
  return a;
}

// A row at the anchor's settings whose cycle is `cycle_ms` at accept length 3.
PublishedCase row_case(double cycle_ms) {
  PublishedCase r = anchor_case();
  r.id = "row";
  r.spec_tok_s = 3 / cycle_ms * 1e3;
  return r;
}

}  // namespace

TEST_CASE("data bound: more work measured faster, or less work slower, bounds the error") {
  const PublishedCase a = anchor_case();
  // A wider tree at the same batch, measured at 8 ms: no prediction that keeps the anchor's 10 ms
  // and does not shorten the cycle for a wider draft reads closer than 8 / 10 - 1 = -20%.
  PublishedCase tree = row_case(8.0);
  tree.topk = 4, tree.num_draft_tokens = 8;
  const auto b = spec_data_bound(tree, a);
  REQUIRE(b);
  CHECK(b->pct == Approx(-20.0));
  CHECK(b->why.find("at least the anchor's batch, context, draft and accepted tokens") != std::string::npos);
  CHECK(b->why.find("8.00 ms cycle against the anchor's 10.00 ms") != std::string::npos);
  CHECK(b->why.find("at least 20.0% low") != std::string::npos);
  // Measured slower than the anchor instead: nothing bounds it.
  tree.spec_tok_s = 3 / 12.0 * 1e3;
  CHECK_FALSE(spec_data_bound(tree, a));

  // Fewer steps measured slower (12 ms): at least +20%.
  PublishedCase short_chain = row_case(12.0);
  short_chain.num_steps = 2, short_chain.num_draft_tokens = 3;
  const auto s = spec_data_bound(short_chain, a);
  REQUIRE(s);
  CHECK(s->pct == Approx(20.0));
  CHECK(s->why.find("at most the anchor's batch") != std::string::npos);
  // Fewer steps measured faster: as expected, nothing bounds it.
  short_chain.spec_tok_s = 3 / 8.0 * 1e3;
  CHECK_FALSE(spec_data_bound(short_chain, a));
  CHECK(s->why.find("at least 20.0% high") != std::string::npos);

  // The anchor's own settings (another dataset, a repeat): bounded both ways.
  REQUIRE(spec_data_bound(row_case(9.0), a));
  CHECK(spec_data_bound(row_case(9.0), a)->pct == Approx(-10.0));
  CHECK(spec_data_bound(row_case(11.0), a)->pct == Approx(10.0));
  CHECK(spec_data_bound(row_case(11.0), a)->why.find("as stated") != std::string::npos);
  // More accepted tokens are more work (the extend's): faster with them is bounded, faster with
  // fewer is not.
  PublishedCase more_accepted = row_case(9.0);
  more_accepted.accept_length = 3.3;
  more_accepted.spec_tok_s = 3.3 / 9.0 * 1e3;
  REQUIRE(spec_data_bound(more_accepted, a));
  CHECK(spec_data_bound(more_accepted, a)->pct == Approx(-10.0));
  PublishedCase fewer_accepted = more_accepted;
  fewer_accepted.accept_length = 2.7;
  fewer_accepted.spec_tok_s = 2.7 / 9.0 * 1e3;
  CHECK_FALSE(spec_data_bound(fewer_accepted, a));
  // Under half a percent is no bound.
  CHECK_FALSE(spec_data_bound(row_case(10.04), a));
}

TEST_CASE("data bound: nothing where the rows cannot be ordered or a cycle is not known") {
  const PublishedCase a = anchor_case();
  // A larger batch with fewer steps: more of one, less of the other.
  PublishedCase mixed = row_case(5.0);
  mixed.batch_size = 4, mixed.num_steps = 2, mixed.num_draft_tokens = 3;
  CHECK_FALSE(spec_data_bound(mixed, a));
  // No accept length stated: its cycle is not measured.
  PublishedCase no_accept = row_case(5.0);
  no_accept.accept_length.reset();
  CHECK_FALSE(spec_data_bound(no_accept, a));
  // Another algorithm, or anything else of the deployment: not more or less of the same work.
  PublishedCase other = row_case(5.0);
  other.algorithm = "EAGLE";
  CHECK_FALSE(spec_data_bound(other, a));
  PublishedCase fp8_kv = row_case(5.0);
  fp8_kv.kv_cache_dtype = "fp8_e4m3";
  CHECK_FALSE(spec_data_bound(fp8_kv, a));
  PublishedCase dp = row_case(5.0);
  dp.enable_dp_attention = true;
  CHECK_FALSE(spec_data_bound(dp, a));
  // A draft count a row does not state.
  PublishedCase no_steps = row_case(5.0);
  no_steps.num_steps.reset();
  CHECK_FALSE(spec_data_bound(no_steps, a));
  // A context one row states and the other does not: not ordered.
  PublishedCase ctx = row_case(5.0);
  ctx.context_len = 4096;
  CHECK_FALSE(spec_data_bound(ctx, a));
  PublishedCase a_ctx = a;
  a_ctx.context_len = 1024;
  REQUIRE(spec_data_bound(ctx, a_ctx));
  CHECK(spec_data_bound(ctx, a_ctx)->pct == Approx(-50.0));
}

TEST_CASE("data bound: plain decode over batch and context") {
  const PublishedCase a = anchor_case();  // 6.67 ms a step at bs 1
  PublishedCase bs4 = a;
  bs4.batch_size = 4;
  bs4.baseline_tok_s = 200;  // 5 ms a step at 4 requests: faster than one
  const auto b = baseline_data_bound(bs4, a);
  REQUIRE(b);
  CHECK(b->pct == Approx(150.0 / 200.0 * 100 - 100));
  CHECK(b->why.find("plain step") != std::string::npos);
  bs4.baseline_tok_s = 100;  // slower with more requests: as expected, no bound
  CHECK_FALSE(baseline_data_bound(bs4, a));
  // The draft settings do not order a plain step.
  PublishedCase wider = a;
  wider.num_steps = 7, wider.baseline_tok_s = 160;
  REQUIRE(baseline_data_bound(wider, a));
  CHECK(baseline_data_bound(wider, a)->why.find("the anchor's batch and context as stated") != std::string::npos);
  // A context only one of them states leaves them unordered.
  PublishedCase ctx = bs4;
  ctx.baseline_tok_s = 200, ctx.context_len = 8192;
  CHECK_FALSE(baseline_data_bound(ctx, a));
}

TEST_CASE("validate --transfer reports the rows a family's own data bound") {
  // SpecForge issue 339: the anchor (3, 1, 4) chain measures 1.86 / 159.78 = 11.64 ms a cycle, the
  // (3, 3, 4) tree of the same steps and verify size 1.99 / 207.62 = 9.58 ms.
  const std::string id = "specforge-issue339-qwen3-30b-a3b-2xh100-bs1-s3k3n4";
  const TransferResult r = run_transfer(test::traces_path("published"), "", id);
  REQUIRE(r.families.size() == 1);
  const TransferRow* row = nullptr;
  for (const auto& x : r.families[0].rows)
    if (x.c.id == id) row = &x;
  REQUIRE(row);
  REQUIRE(row->spec_bound);
  CHECK(row->spec_bound->pct == Approx((1.99 / 207.62) / (1.86 / 159.78) * 100 - 100));
  CHECK_FALSE(row->baseline_bound);  // its plain figure is the anchor's own
  REQUIRE(r.spec_bounded.size() == 1);
  CHECK(r.spec_bounded[0].id == id);
  REQUIRE(row->spec_tok_s);
  CHECK(r.spec_bounded[0].error_pct == Approx((*row->spec_tok_s / 207.62 - 1) * 100));
  // The wider trees measure longer cycles than the anchor: no bound.
  for (const auto& x : r.families[0].rows)
    if (x.c.id != id) CHECK_FALSE(x.spec_bound);
  // The bound above the worst target's 15% is that target's floor; the median target has none.
  REQUIRE(r.targets.size() == 2);
  CHECK_FALSE(r.targets[0].floor_pct);
  REQUIRE(r.targets[1].floor_pct);
  CHECK(*r.targets[1].floor_pct == Approx(-row->spec_bound->pct));
  CHECK(r.targets[1].floor_id == id);

  const auto text = test::run_specsim({"validate", "--transfer", "--case", id});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("(the family's own data bound its spec tok/s: with at least the anchor's batch, context, draft "
                      "and accepted tokens it measures a 9.58 ms cycle against the anchor's 11.64 ms") !=
        std::string::npos);
  CHECK(text.out.find("held-out rows whose error the family's own data bound") != std::string::npos);
  CHECK(text.out.find("17.7%  at best, from the measurements alone (" + id +
                      "): out of reach for any prediction that keeps the anchor") != std::string::npos);
  const auto js = test::run_specsim({"validate", "--transfer", "--case", id, "--json"});
  REQUIRE(js.exit_code == 0);
  const auto j = nlohmann::json::parse(js.out);
  const auto& bounded = j.at("summary").at("held_out_data_bounded");
  REQUIRE(bounded.at("spec_tok_s").size() == 1);
  CHECK(bounded.at("spec_tok_s").at(0).at("id") == id);
  CHECK(bounded.at("baseline_tok_s").empty());
  CHECK(j.at("targets").at(1).at("data_floor_pct").get<double>() == Approx(17.66).epsilon(1e-3));
  CHECK(j.at("targets").at(1).at("data_floor_case") == id);
  CHECK(j.at("targets").at(0).at("data_floor_pct").is_null());
  for (const auto& x : j.at("families").at(0).at("rows")) {
    if (x.at("id") == id) CHECK(x.at("data_bound_pct").at("spec_tok_s").get<double>() < -17);
    if (x.at("anchor") == true) CHECK(x.at("data_bound_pct").at("spec_tok_s").is_null());
  }
  // A family without one says so.
  const auto none = test::run_specsim({"validate", "--transfer", "--case", "vllm-issue20780-llama31-8b-eagle1-k3"});
  REQUIRE(none.exit_code == 0);
  CHECK(none.out.find("  spec tok/s               none") != std::string::npos);
  CHECK(none.out.find("at best, from the measurements alone") == std::string::npos);
}
