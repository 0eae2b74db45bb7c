#pragma once
// A pasted launch command (SGLang or vLLM) read against its stack's flag table
// (stack_flag_table.h): which stack, each flag with its values and class, in the order pasted.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "scenario/stack_flag_table.h"

namespace specsim {

struct PastedFlag {
  std::string given;                ///< as pasted (--tp, -tp, --no-enforce-eager)
  const StackFlag* row = nullptr;   ///< its table row; null for an environment variable
  std::string sub;                  ///< vLLM's --speculative-config.KEY form: KEY
  std::vector<std::string> values;  ///< none for a switch
  bool negated = false;             ///< --no-FLAG of a bool flag
  bool older_spelling = false;      ///< `given` is another release's spelling of row (and sub)
  std::string since;                ///< a later release's flag or spelling: the first release with it
  FlagClass cls = FlagClass::Refused;
  std::string what;
  /// The value a one-value flag takes: its last ("" for a switch).
  std::string last() const { return values.empty() ? std::string() : values.back(); }
};

struct CommandFlags {
  std::string stack;  ///< "sglang" or "vllm"
  std::string where;  ///< the specsim flag that gave the command (errors name it)
  std::vector<PastedFlag> flags;
  /// What reading the command skipped or cut (a docker wrapper, a shell pipe), in words.
  std::vector<std::string> notes;
  /// The last occurrence of the flag `canonical` (SGLang and vLLM take the last), or null.
  const PastedFlag* last(const std::string& canonical) const;
};

/// Splits a command line on blanks (single and double quotes group).
std::vector<std::string> split_command(const std::string& text);

/// Reads `tokens`: the program past its wrappers (command_program.h: environment assignments,
/// docker run, interpreter options), then the flags, each looked up in the stack's table. InputError naming `where` for
/// a flag the stack does not have, a missing or extra value, or a stray word.
CommandFlags read_command_flags(const std::vector<std::string>& tokens, const std::string& where);

/// The first refused flag as `not modelled: FLAG changes WHAT` (and how many more), or nothing.
void refuse_unmodelled(const CommandFlags& c);

struct RunArgs;

/// What a modelled flag does to the run flags: (flag, args, notes, where for errors).
using FlagApplier = std::function<void(const PastedFlag&, RunArgs&, std::vector<std::string>&, const std::string&)>;
/// A stack's modelled flags by canonical name.
using FlagAppliers = std::map<std::string, FlagApplier>;

/// The canonical flags a table of appliers applies, sorted.
std::vector<std::string> applier_flags(const FlagAppliers& appliers);

/// Applies the modelled flag `f` through `appliers`; InputError when the table marks it modelled
/// but no applier exists (the flag table and the code disagree).
void apply_modelled(const FlagAppliers& appliers, const PastedFlag& f, RunArgs& a, std::vector<std::string>& notes,
                    const std::string& at);

}  // namespace specsim
