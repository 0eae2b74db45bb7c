// The SpecBundle dashboard rows (traces/published/specbundle-*.json): one family per target and
// draft, anchored on the (3, 1, 4) config, and each row's figures the ones its quote shows.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "test_util.h"
#include "validate/transfer.h"

using namespace specsim;

namespace {

bool from_specbundle_dashboard(const std::string& url) {
  return url.find("sgl-project/SpecForge/blob/d9952d16") != std::string::npos &&
         url.find("spec_bundle/public/raw_data/data.json") != std::string::npos;
}

// The output_throughput and accept_length figures of a quote, in order (plain row, then the draft).
std::vector<double> specbundle_quote_figures(const std::string& quote, const std::string& key) {
  std::vector<double> out;
  const std::regex re("\"" + key + "\": ([0-9.]+)");
  for (auto it = std::sregex_iterator(quote.begin(), quote.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back(std::stod((*it)[1].str()));
  return out;
}

}  // namespace

TEST_CASE("SpecBundle rows: each file's figures are its quote's, per stream = whole batch / batch size") {
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(test::traces_path("published"))) {
    const std::string name = e.path().filename().string();
    if (name.rfind("specbundle-", 0) != 0) continue;
    ++files;
    INFO(name);
    const auto c = nlohmann::json::parse(test::slurp(e.path().string()));
    CHECK(c.at("role") == "held_out");
    CHECK(from_specbundle_dashboard(c.at("source").at("url").get<std::string>()));
    const std::string quote = c.at("source").at("quote").get<std::string>();
    const auto tput = specbundle_quote_figures(quote, "output_throughput");
    const auto acc = specbundle_quote_figures(quote, "accept_length");
    REQUIRE(tput.size() == 2);
    REQUIRE(acc.size() == 2);
    CHECK(acc[0] == 1.0);  // the plain row
    const int bs = c.at("batch_size").get<int>();
    CHECK(c.at("baseline_tok_s").get<double>() * bs == Approx(tput[0]).epsilon(1e-6));
    CHECK(c.at("spec_tok_s").get<double>() * bs == Approx(tput[1]).epsilon(1e-6));
    CHECK(c.at("accept_length").get<double>() == acc[1]);
    if (bs > 1) {
      CHECK(c.at("baseline_total_tok_s").get<double>() == tput[0]);
      CHECK(c.at("spec_total_tok_s").get<double>() == tput[1]);
    }
    // The id names the config the quote shows.
    const std::string cfg = "-bs" + std::to_string(bs) + "-s" +
                            std::to_string(c.at("speculative_num_steps").get<int>()) + "k" +
                            std::to_string(c.at("speculative_eagle_topk").get<int>()) + "n" +
                            std::to_string(c.at("speculative_num_draft_tokens").get<int>()) + ".json";
    CHECK(name.size() > cfg.size());
    CHECK(name.compare(name.size() - cfg.size(), cfg.size(), cfg) == 0);
    CHECK(quote.find("\"batch_size\": " + std::to_string(bs) + ",") != std::string::npos);
  }
  CHECK(files == 40);
}

TEST_CASE("SpecBundle rows: one family per target and draft, anchored on (3, 1, 4), its plain run not re-scored") {
  const TransferResult r = run_transfer(test::traces_path("published"));
  int families = 0;
  std::set<std::string> drafts;
  for (const auto& f : r.families) {
    if (!from_specbundle_dashboard(f.family.source)) continue;
    ++families;
    INFO(f.family.id);
    CHECK(f.not_scored.empty());
    REQUIRE(f.family.anchor);
    const PublishedCase& a = f.family.cases[*f.family.anchor];
    CHECK(a.num_steps == 3);
    CHECK(a.topk == 1);
    CHECK(a.num_draft_tokens == 4);
    REQUIRE(f.family.cases.size() == 5);
    // One draft a family: the two drafts of a target are two deployments.
    for (const auto& c : f.family.cases) {
      CHECK(c.zoo_draft == a.zoo_draft);
      CHECK(c.id.substr(0, c.id.find("-mtbench-")) == a.id.substr(0, a.id.find("-mtbench-")));
    }
    drafts.insert(a.id.substr(0, a.id.find("-mtbench-")));
    // Every row shares the table's one plain run: no baseline is scored, four spec rows are.
    CHECK(f.baseline[1].n == 0);
    CHECK(f.spec[1].n == 4);
  }
  CHECK(families == 8);
  CHECK(drafts.size() == 8);
}
