#pragma once
// A models/ JSON file broken on purpose, on a copy of models/ (SPECSIM_MODELS): specsim must refuse
// it in one line naming the file, exit 2, and write no output file.
#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"

namespace specsim::test {

class BrokenModelFile {
 public:
  /// Copies models/ to a fresh folder; `rel` is the file under test (e.g. kernels/fa3_attention.json).
  explicit BrokenModelFile(const std::string& rel) : dir_(fresh_dir()), rel_(rel) {
    REQUIRE(run_program("/bin/cp", {"-r", models_path(""), dir_ + "/models"}).exit_code == 0);
    good_ = nlohmann::json::parse(slurp(file()));
  }

  /// specsim ARGS with its models/ read from the copy.
  CliResult run(const std::vector<std::string>& args) const {
    std::vector<std::string> all = {"SPECSIM_MODELS=" + dir_ + "/models", specsim_bin()};
    all.insert(all.end(), args.begin(), args.end());
    return run_program("/usr/bin/env", all);
  }

  /// The shipped file edited by `edit` is refused by `args` (a command that reads it): one line
  /// naming the file, exit 2, no --trace file.
  void check_refused(const std::function<void(nlohmann::json&)>& edit, std::vector<std::string> args) const {
    nlohmann::json j = good_;
    edit(j);
    write_text(file(), j.dump());
    const std::string trace = dir_ + "/trace.json";
    args.insert(args.end(), {"--trace", trace});
    const CliResult r = run(args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(rel_.substr(rel_.rfind('/') + 1)) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(exists(trace));
  }

  /// Puts the shipped file back.
  void restore() const { write_text(file(), good_.dump()); }

 private:
  std::string file() const { return dir_ + "/models/" + rel_; }
  std::string dir_, rel_;
  nlohmann::json good_;
};

}  // namespace specsim::test
