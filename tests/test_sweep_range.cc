// Value lists and ranges of swept flags, and the grid's enumeration.
#include <catch2/catch.hpp>

#include "sweep/grid.h"
#include "sweep/range.h"
#include "util/error.h"

using namespace specsim;
using namespace specsim::sweep;

namespace {
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.line();
  }
  return "";
}
}  // namespace

TEST_CASE("integer lists and ranges") {
  CHECK(parse_int_values("4,8", "--tp-size", 1, 1024) == std::vector<long long>{4, 8});
  CHECK(parse_int_values("2..8", "--x", 0, 100) == std::vector<long long>{2, 3, 4, 5, 6, 7, 8});
  CHECK(parse_int_values("1..16:5", "--x", 0, 100) == std::vector<long long>{1, 6, 11, 16});
  CHECK(parse_int_values("1, 2..3, 10", "--x", 0, 100) == std::vector<long long>{1, 2, 3, 10});
  CHECK(parse_int_values("7", "--x", 0, 100) == std::vector<long long>{7});
}

TEST_CASE("float ranges need a step and round to the written decimals") {
  const auto v = parse_double_values("1..2:0.1", "--accept-len");
  REQUIRE(v.size() == 11);
  CHECK(v[1] == 1.1);
  CHECK(v[3] == 1.3);
  CHECK(v.back() == 2.0);
  CHECK(parse_double_values("1.5,2,2.5,3", "--accept-len") == std::vector<double>{1.5, 2, 2.5, 3});
  CHECK(parse_double_values("1..3", "--accept-len") == std::vector<double>{1, 2, 3});
  CHECK(parse_double_values("1..3:0.002", "--accept-len").size() == 1001);
  CHECK(error_of([] { parse_double_values("1.5..3", "--accept-len"); }).find("needs a STEP") != std::string::npos);
}

TEST_CASE("malformed ranges name the flag") {
  for (const char* bad : {"8..2", "1..", "..4", "a..b", "1..4:0", "1..4:-1", "2,,3", "4:2", "1..4:x", ""}) {
    INFO(bad);
    const std::string e = error_of([&] { parse_int_values(bad, "--batch-size", 1, 1000); });
    CHECK(e.find("(--batch-size)") != std::string::npos);
  }
  CHECK(error_of([] { parse_int_values("1.5", "--tp-size", 1, 1024); }).find("whole numbers") != std::string::npos);
  CHECK(error_of([] { parse_int_values("0..4", "--tp-size", 1, 1024); }).find("outside 1..1024") != std::string::npos);
  CHECK(error_of([] { parse_double_values("1..1e12:1", "--accept-len"); }).find("more than") != std::string::npos);
}

TEST_CASE("all-reduce lists expand fixed ranges") {
  const auto v = parse_allreduce_values({"fixed:10..50:10,nccl", "custom", "fixed:5,7"}, "--allreduce");
  REQUIRE(v.size() == 9);
  CHECK(v[0].kind == AllReduceChoice::Kind::Fixed);
  CHECK(v[0].fixed_us == 10);
  CHECK(v[4].fixed_us == 50);
  CHECK(v[5].kind == AllReduceChoice::Kind::Nccl);
  CHECK(v[6].kind == AllReduceChoice::Kind::Custom);
  CHECK(v[8].fixed_us == 7);
  CHECK(v[8].label() == "fixed:7");
  CHECK(error_of([] { parse_allreduce_values({"fixed:10..x"}, "--allreduce"); }).find("(--allreduce)") !=
        std::string::npos);
  CHECK(error_of([] { parse_allreduce_values({"nccl,12"}, "--allreduce"); }).find("(--allreduce)") !=
        std::string::npos);
  CHECK(error_of([] { parse_allreduce_values({"fixed:0..3"}, "--allreduce"); }).find("(0, 1e7]") != std::string::npos);
  // A fuzzer-found range of 9.27 million latencies (over 2 GB while expanding): refused up front.
  CHECK(error_of([] {
          parse_allreduce_values({"fixed:10..9270360"}, "--allreduce");
        }).find("expands to more than 1000000 values") != std::string::npos);
  CHECK(parse_allreduce_values({"fixed:1..1000000"}, "--allreduce").size() == kMaxAxisValues);
}

TEST_CASE("a fixed range with @PHASES: every value scoped to those phases, the others on NCCL") {
  const auto v = parse_allreduce_values({"fixed:5..250:5@verify"}, "--allreduce");
  REQUIRE(v.size() == 50);
  for (const auto& c : v) {
    CHECK(c.kind == AllReduceChoice::Kind::Fixed);
    CHECK(c.scoped);
    CHECK(c.applies_to(PhaseKind::Verify));
    CHECK_FALSE(c.applies_to(PhaseKind::BaselineDecode));
    CHECK_FALSE(c.applies_to(PhaseKind::DraftDecode));
    CHECK_FALSE(c.applies_to(PhaseKind::DraftExtend));
  }
  CHECK(v[0].fixed_us == 5);
  CHECK(v.back().fixed_us == 250);
  // each point is the choice `run --allreduce fixed:V@PHASES` makes
  CHECK(v[7].label() == parse_allreduce("fixed:40@verify").label());
  CHECK(v[7].phases == parse_allreduce("fixed:40@verify").phases);

  // the scope closes a fixed: list and covers all of it; phase names after it add phases
  const auto w = parse_allreduce_values({"fixed:10,20..30:10@verify,draft_extend,nccl,fixed:7"}, "--allreduce");
  REQUIRE(w.size() == 5);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(w[i].applies_to(PhaseKind::Verify));
    CHECK(w[i].applies_to(PhaseKind::DraftExtend));
    CHECK_FALSE(w[i].applies_to(PhaseKind::BaselineDecode));
  }
  CHECK(w[2].label() == "fixed:30@verify,draft_extend");
  CHECK(w[3].kind == AllReduceChoice::Kind::Nccl);
  CHECK_FALSE(w[4].scoped);  // a later fixed: list has its own (no) scope
  CHECK(w[4].applies_to(PhaseKind::BaselineDecode));
  // other backends keep run's syntax, with phases continuing after a comma
  const auto c = parse_allreduce_values({"custom@verify,draft_decode"}, "--allreduce");
  REQUIRE(c.size() == 1);
  CHECK(c[0].applies_to(PhaseKind::DraftDecode));
  CHECK_FALSE(c[0].applies_to(PhaseKind::DraftExtend));

  // bad scopes name the flag and say what to write
  CHECK(error_of([] {
          parse_allreduce_values({"fixed:5..50:5@verfy"}, "--allreduce");
        }).find("unknown phase 'verfy'") != std::string::npos);
  CHECK(error_of([] { parse_allreduce_values({"fixed:5..50:5@"}, "--allreduce"); }).find("needs phases") !=
        std::string::npos);
  const std::string after = error_of([] { parse_allreduce_values({"fixed:5..50:5@verify,60"}, "--allreduce"); });
  CHECK(after.find("start its values again with fixed:") != std::string::npos);
  CHECK(after.find("(--allreduce)") != std::string::npos);
}

TEST_CASE("a measured value is one number: lists and ranges are refused naming the flag") {
  CHECK(parse_measurement("89.5", "--measured-baseline-tok-s") == 89.5);
  CHECK(parse_measurement("+200", "--measured-allreduce-us") == 200);
  for (const char* bad : {"80,90", "80..90", "80..90:5", " 80, 90"}) {
    INFO(bad);
    const std::string e = error_of([&] { parse_measurement(bad, "--measured-baseline-tok-s"); });
    CHECK(e.find("is a list or range") != std::string::npos);
    CHECK(e.find("(--measured-baseline-tok-s)") != std::string::npos);
  }
  for (const char* bad : {"", "abc", "80x", "1e"}) {
    INFO(bad);
    CHECK(error_of([&] { parse_measurement(bad, "--measured-spec-tok-s"); }).find("is not a number") !=
          std::string::npos);
  }
}

TEST_CASE("the grid is the cartesian product, last axis fastest") {
  Grid g;
  g.tp = {4, 8};
  g.batch = {1, 4, 16};
  g.accept_len = {1.5, 2, 2.5, 3};
  CHECK(g.size() == 24);
  CHECK(g.points_per_plan() == 4);
  const auto ix = g.decode(23);
  CHECK(ix[kTp] == 1);
  CHECK(ix[kBatch] == 2);
  CHECK(ix[kAcceptLen] == 3);
  CHECK(g.decode(5)[kBatch] == 1);
  CHECK(g.decode(5)[kAcceptLen] == 1);
  Grid huge;
  huge.context.assign(10000, 1);
  huge.batch.assign(10000, 1);
  CHECK(error_of([&] { (void)huge.size(); }).find("more than") != std::string::npos);
}
