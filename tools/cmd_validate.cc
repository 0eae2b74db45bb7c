// `specsim validate`: the published measurements (traces/published/) against unanchored predictions.
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "spec/paths.h"
#include "validate/validate.h"

namespace specsim::cli {

int cmd_validate(int argc, char** argv) {
  CLI::App app{"specsim validate: published speculative-decoding measurements against unanchored predictions"};
  app.name("specsim validate");
  std::string set;
  bool json = false;
  app.add_option("--set", set, "folder of case files (default: the repo's traces/published/)");
  app.add_flag("--json", json, "print the result as one JSON object");
  return guarded(app, argc, argv, [&] {
    const bool builtin = set.empty();
    if (builtin) set = models_dir() + "/../traces/published";
    const ValidateResult r = run_validate(set, builtin ? "traces/published" : set);
    if (json)
      std::cout << validate_json(r).dump(2) << "\n";
    else
      std::cout << validate_text(r);
    return kExitOk;
  });
}

}  // namespace specsim::cli
