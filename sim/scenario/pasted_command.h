#pragma once
// A pasted launch command, SGLang's or vLLM's, into the run flags: every flag classed by its
// stack's table (models/stacks/), the refused ones refused, the modelled ones filling what the
// flags given to specsim leave open; the list the report prints.
#include <string>
#include <vector>

#include "scenario/resolve.h"
#include "scenario/scenario.h"

namespace specsim {

struct PastedCommand {
  std::string stack;                ///< "SGLang v0.5.2" or "vLLM v0.11.0"
  std::vector<PastedFlagRow> rows;  ///< each flag (its last occurrence), in the order first pasted
  std::vector<std::string> notes;   ///< mappings made (HF id -> zoo name)
};

/// Fills the run flags `args` lacks from the command's tokens. InputError naming `where` on a
/// refused or unknown flag, a bad value, a command without --hardware given to specsim, or a
/// --context-len / --batch-size above the command's own limit.
PastedCommand args_from_command(const std::vector<std::string>& tokens, RunArgs& args, const std::string& where);

}  // namespace specsim
