#pragma once
// A pasted SGLang launch command (`python -m sglang.launch_server --model-path ... --tp 8 ...`)
// read into the run flags: the flags that shape the cycle are taken, Hugging Face ids of zoo
// models map to their zoo names, everything else is accepted and listed as ignored.
#include <string>
#include <vector>

#include "scenario/resolve.h"

namespace specsim {

struct SglangCommand {
  std::vector<std::string> ignored;  ///< flags that do not change the cycle, as given
  std::vector<std::string> notes;    ///< mappings made (HF id -> zoo name)
};

/// Splits a command line on blanks (single and double quotes group).
std::vector<std::string> split_command(const std::string& text);

/// Fills the run flags `args` lacks from the SGLang command's tokens. InputError naming
/// `where` on a flag without its value or a bad number.
SglangCommand args_from_sglang(const std::vector<std::string>& tokens, RunArgs& args, const std::string& where);

/// The zoo name of a Hugging Face model id ("" when it is not in the zoo).
std::string zoo_name_of_hf_id(const std::string& id);

}  // namespace specsim
