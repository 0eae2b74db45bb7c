// `specsim validate`: the published measurements (traces/published/) against unanchored predictions.
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "scenario/paths.h"
#include "util/json_io.h"
#include "validate/case_report.h"
#include "validate/error_bands.h"
#include "validate/nccl_check.h"
#include "validate/transfer.h"
#include "validate/validate.h"

namespace specsim::cli {

int cmd_validate(int argc, char** argv) {
  CLI::App app{"specsim validate: published speculative-decoding measurements against unanchored predictions"};
  app.name("specsim validate");
  std::string set;
  bool json = false, nccl = false, transfer = false;
  std::string nccl_dir;
  app.add_option("--set", set, "folder of case files (default: the repo's traces/published/)");
  app.add_flag("--nccl", nccl, "instead: the NCCL model against the nccl-tests logs (8 KB - 1 MB)");
  app.add_option("--nccl-logs", nccl_dir, "folder with index.json and the logs (default: traces/nccl-tests/)");
  app.add_flag("--json", json, "print the result as one JSON object");
  std::string case_id;
  app.add_option("--case", case_id,
                 "one case: its row, its assumptions, the `specsim run` command that replays it and that run's report")
      ->excludes("--nccl");
  app.add_flag("--transfer", transfer,
               "instead: each family of rows (one source and deployment) predicted from its anchor row's measurements "
               "(with --case: that case's family)")
      ->excludes("--nccl");
  std::string bands_out;
  app.add_option("--write-error-bands", bands_out,
                 "instead: write the held-out error bands per class (validate and --transfer) to FILE; the run "
                 "reports read models/accuracy/error-bands.json")
      ->excludes("--nccl", "--case", "--transfer", "--json");
  return guarded(app, argc, argv, [&] {
    if (nccl) {
      if (nccl_dir.empty()) nccl_dir = models_dir() + "/../traces/nccl-tests";
      const auto logs = run_nccl_check(nccl_dir, 8 * 1024, 1024 * 1024);
      if (json)
        std::cout << dump_json(nccl_check_json(logs)) << "\n";
      else
        std::cout << nccl_check_text(logs);
      return kExitOk;
    }
    const bool builtin = set.empty();
    if (builtin) set = models_dir() + "/../traces/published";
    const std::string label = builtin ? "traces/published" : set;
    if (!bands_out.empty()) {
      const nlohmann::json bands = error_bands_json(run_validate(set, label), run_transfer(set, label));
      write_file_atomic(bands_out, dump_json(bands) + "\n", "--write-error-bands");
      std::cout << "wrote " << bands_out << "\n";
      return kExitOk;
    }
    if (transfer) {
      const TransferResult t = run_transfer(set, label, case_id);
      std::cout << (json ? dump_json(transfer_json(t)) + "\n" : transfer_text(t));
      return kExitOk;
    }
    if (!case_id.empty()) {
      std::cout << case_report(validate_case(set, case_id, label), json);
      return kExitOk;
    }
    const ValidateResult r = run_validate(set, label);
    if (json)
      std::cout << dump_json(validate_json(r)) << "\n";
    else
      std::cout << validate_text(r);
    return kExitOk;
  });
}

}  // namespace specsim::cli
