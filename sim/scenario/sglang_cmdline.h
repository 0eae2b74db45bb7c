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

/// SGLang's spec-v2 worker (overlap scheduling on) by release (docs/sources.md#S-stack-flags):
/// the default from v0.5.11 (SGLANG_ENABLE_SPEC_V2 on unless set off), the only worker from v0.5.14
/// (the variable and the v1 worker removed).
inline constexpr const char* kSglangSpecV2Default = "v0.5.11";
inline constexpr const char* kSglangSpecV2Only = "v0.5.14";

/// The release a command's later flags date it to: the newest `since` among them ("" if none).
std::string sglang_command_release(const CommandFlags& c);

/// InputError when the command speculates (`a`: its flags merged with specsim's) and its later
/// flags date it to a release that runs the spec-v2 worker: kSglangSpecV2Only or later, or
/// kSglangSpecV2Default or later without SGLANG_ENABLE_SPEC_V2 set off. The SGLang runtime profile
/// describes v0.5.2's v1 worker. The error names every such flag, and the v0.5.2 flag a later name
/// stands for.
void refuse_sglang_spec_v2(const CommandFlags& c, const RunArgs& a);

/// The canonical flags args_from_sglang applies (each must be a modelled row of the table).
const std::vector<std::string>& sglang_applied_flags();

}  // namespace specsim
