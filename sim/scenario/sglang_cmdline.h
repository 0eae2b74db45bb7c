#pragma once
// A pasted SGLang launch command (`python -m sglang.launch_server --model-path ... --tp 8 ...`)
// put into the run flags: each modelled flag of models/stacks/sglang-v0.5.2-server-args.csv sets
// its RunArgs field, the last occurrence winning as in SGLang.
#include <string>
#include <vector>

#include "scenario/command_flags.h"
#include "scenario/command_values.h"  // zoo_name_of_hf_id, for the readers of logs too
#include "scenario/resolve.h"

namespace specsim {

/// The run flags the command's modelled flags give (a fresh RunArgs: the caller merges it under
/// the flags given to specsim); `notes` gets the mappings made. InputError on a bad value.
RunArgs args_from_sglang(const CommandFlags& c, std::vector<std::string>& notes);

/// The release a command's later flags date it to: the newest `since` among them ("" if none).
std::string sglang_command_release(const CommandFlags& c);

/// The canonical flags args_from_sglang applies (each must be a modelled row of the table).
const std::vector<std::string>& sglang_applied_flags();

}  // namespace specsim
