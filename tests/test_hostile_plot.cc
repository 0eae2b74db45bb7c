// Command injection into gnuplot: no user string with a control character or a backquote reaches
// a plot script; a quote in a path is escaped and drawn, not run (that case needs gnuplot: it
// fails without it where CI=true, and says SKIP elsewhere).
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "hostile_cases.h"

using namespace specsim::test;

TEST_CASE("plot: names and paths that could run gnuplot commands are refused") {
  const std::string dir = fresh_dir();
  const std::string inject = "\nsystem('touch " + dir + "_pwned')\n";
  // A model folder whose name carries a newline and a gnuplot system() call.
  const std::string model_dir = dir + "/m\nsystem('id')\n";
  ::mkdir(model_dir.c_str(), 0755);
  write_text(model_dir + "/config.json", slurp(models_path("llama-3.1-8b/config.json")));
  // A hardware profile whose GPU name does the same.
  auto hw = nlohmann::json::parse("{\"gpu\": " + slurp(models_path("hardware/gpus/h200.json")) +
                                  ", \"topology\": " + slurp(models_path("hardware/topologies/nvswitch.json")) + "}");
  hw["gpu"]["name"] = "h200" + inject;
  write_text(dir + "/hw.json", hw.dump());
  // A config file (not a folder) whose stem carries the newline; a topology name that does.
  write_text(dir + "/m\nsystem('id').json", slurp(models_path("llama-3.1-8b/config.json")));
  auto hw_topo = hw;
  hw_topo["gpu"]["name"] = "h200";
  hw_topo["topology"]["name"] = "nvswitch\nsystem('id')";
  write_text(dir + "/hw_topo.json", hw_topo.dump());
  const std::string png = dir + "/p.png";
  expect_bad_input({
      {{"sweep", "--plot", dir + "/tab\there.png"}, "(--plot)"},
      {{"sweep", "--plot", png, "--plot-script", dir + "/s`id`.gp"}, "(--plot-script)"},
      {{"sweep", "--model-path", dir + "/m\nsystem('id').json", "--speculative-algorithm", "NONE", "--plot", png},
       "--model-path"},
      {{"sweep", "--hardware", dir + "/hw_topo.json", "--plot", png}, "topology.name"},
      {{"sweep", "--plot", dir + "/a" + inject + ".png"}, "(--plot)"},
      {{"sweep", "--plot", dir + "/a`touch x`.png"}, "(--plot)"},
      {{"sweep", "--plot", dir + "/a\r.png"}, "(--plot)"},
      {{"sweep", "--plot", png, "--plot-script", dir + "/s" + inject + ".gp"}, "(--plot-script)"},
      {{"sweep", "--model-path", model_dir, "--speculative-algorithm", "NONE", "--plot", png}, "--model-path"},
      {{"sweep", "--hardware", dir + "/hw.json", "--plot", png}, "--hardware"},
  });
  CHECK_FALSE(exists(dir + "_pwned"));
  CHECK_FALSE(exists(png));
}

TEST_CASE("plot: a quote in the plot path is escaped, not run") {
  if (!gnuplot_or_skip("the drawn-path case")) return;
  const std::string dir = fresh_dir();
  const std::string png = dir + "/q');system('touch specsim_q_pwned');('.png";
  count_cases();
  const auto r = run_specsim({"sweep", "--batch-size", "1,2", "--plot", png});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(exists(png));
  CHECK_FALSE(exists("specsim_q_pwned"));
}
