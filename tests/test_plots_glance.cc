// Plots read at a glance: each one rendered to a PNG and its gnuplot script checked for what the
// picture must say (the winning setting per batch size, tok/s beside the time breakdown, only
// drawn series in the legend, a large grid refused naming the flag that splits it).
#include <catch2/catch.hpp>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "test_util.h"

using namespace specsim::test;
using nlohmann::json;

namespace {

// Width and height from the PNG's IHDR chunk (big-endian at bytes 16 and 20).
std::pair<unsigned, unsigned> png_size(const std::string& img) {
  REQUIRE(img.size() > 24);
  REQUIRE(img.rfind("\x89PNG", 0) == 0);
  auto be32 = [&](std::size_t at) {
    unsigned v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(img[at + i]);
    return v;
  };
  return {be32(16), be32(20)};
}

}  // namespace

TEST_CASE("plots: the breakdown bars are per output token with tok/s beside; unused parts not in the key") {
  if (!have_gnuplot()) {
    std::cout << "SKIP: gnuplot is not installed (apt-get install gnuplot-nox)\n";
    return;
  }
  const std::string dir = fresh_dir();
  const auto r = run_specsim({"sweep", "--speculative-num-steps", "1,2,3", "--runtime", "none", "--plot-kind",
                              "breakdown", "--plot", dir + "/b.png", "--plot-script", dir + "/b.gp"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto [w, h] = png_size(slurp(dir + "/b.png"));
  CHECK(w >= 640);
  CHECK(h >= 400);
  CHECK(slurp(dir + "/b.png").size() > 5000);
  const std::string gp = slurp(dir + "/b.gp");
  CHECK(gp.find("us per output token") != std::string::npos);
  CHECK(gp.find("axes x1y2") != std::string::npos);
  CHECK(gp.find("title 'tok/s (right axis)'") != std::string::npos);
  CHECK(gp.find("title 'gemm'") != std::string::npos);
  CHECK(gp.find("title 'runtime'") == std::string::npos);  // --runtime none: no runtime time anywhere
}

TEST_CASE("plots: a grid too large for bars is refused naming the flag that splits it") {
  const std::string dir = fresh_dir();
  const auto r =
      run_specsim({"sweep", "--speculative-num-steps", "1,2,3,4,5,6", "--speculative-eagle-topk", "1,2,4",
                   "--batch-size", "1,2,4,8,16,32,64", "--plot-kind", "breakdown", "--plot", dir + "/x.png"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("has 252 (--batch-size 7 x --speculative-num-steps 6") != std::string::npos);
  CHECK(r.err.find("give --batch-size one value per run") != std::string::npos);
  CHECK_FALSE(exists(dir + "/x.png"));
}

TEST_CASE("plots: the tune plot labels the winning setting at each batch size") {
  if (!have_gnuplot()) {
    std::cout << "SKIP: gnuplot is not installed (apt-get install gnuplot-nox)\n";
    return;
  }
  const std::string dir = fresh_dir();
  write_text(dir + "/acc.json", R"({"depth_rates": [0.7]})");
  const auto js = run_specsim({"tune", "--acceptance", dir + "/acc.json", "--batch-size", "1,8,64", "--json"});
  INFO(js.err);
  REQUIRE(js.exit_code == 0);
  const auto r = run_specsim({"tune", "--acceptance", dir + "/acc.json", "--batch-size", "1,8,64", "--plot",
                              dir + "/t.png", "--plot-script", dir + "/t.gp"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto [w, h] = png_size(slurp(dir + "/t.png"));
  CHECK(w >= 640);
  CHECK(h >= 400);
  const std::string gp = slurp(dir + "/t.gp");
  std::map<int, std::string> label_at;  // batch size -> label text, from "set label 'TEXT' at BS,Y"
  std::istringstream lines(gp);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("set label 's", 0) != 0) continue;
    const auto close = line.find('\'', 11);
    const auto at = line.find(" at ", close);
    REQUIRE(at != std::string::npos);
    label_at[std::stoi(line.substr(at + 4))] = line.substr(11, close - 11);
  }
  int labelled = 0;
  const json tuned = json::parse(js.out);
  for (const auto& b : tuned["batches"]) {
    if (!b.contains("ranked") || b["ranked"].empty()) continue;
    // The best over every backend: the label names it at that batch size.
    json best = b["ranked"][0];
    for (const auto& x : b["ranked"])
      if (x["tok_s"].get<double>() > best["tok_s"].get<double>()) best = x;
    const std::string want = "s" + std::to_string(best["steps"].get<int>()) + " k" +
                             std::to_string(best["topk"].get<int>()) + " d" +
                             std::to_string(best["draft_tokens"].get<int>());
    const int bs = b["batch_size"].get<int>();
    INFO("bs " << bs << " want " << want);
    REQUIRE(label_at.count(bs));
    CHECK(label_at[bs].rfind(want, 0) == 0);
    ++labelled;
  }
  CHECK(labelled >= 2);                                          // a batch size where nothing runs has no point
  CHECK(label_at.size() == static_cast<std::size_t>(labelled));  // and no label
  CHECK(gp.find("the winning setting") != std::string::npos);
}
