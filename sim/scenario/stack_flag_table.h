#pragma once
// A serving stack's launch flags as data (models/stacks/*.csv): one row per flag of its pinned
// release, each classed modelled (what it changes in the run), refused (what it changes that the
// model does not price) or ignored (nothing a cycle runs: logging, ports, tokenizer, ...).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace specsim {

enum class FlagClass { Modelled, Refused, Ignored };
/// How many values a flag takes: switch (none), bool (none; --no-FLAG too), value (one), list
/// (one or more), optional (zero or one).
enum class FlagArity { Switch, Bool, Value, List, Optional };

/// A class for one value of a flag (models/stacks/*-flag-values.csv): `--attention-backend fa3`
/// is what specsim prices, another backend is not.
struct FlagValueClass {
  std::string value;
  FlagClass cls = FlagClass::Refused;
  std::string what;
};

struct StackFlag {
  std::string flag;                  ///< the canonical spelling (--tensor-parallel-size)
  std::vector<std::string> aliases;  ///< other spellings (--tp-size, -tp)
  FlagArity arity = FlagArity::Value;
  FlagClass cls = FlagClass::Refused;  ///< for any value without its own class in by_value
  std::string what;                    ///< what it changes (modelled, refused) or why nothing (ignored)
  std::vector<FlagValueClass> by_value;

  /// The class of this flag given `value`: its by_value row, else the flag's own.
  const FlagValueClass* for_value(const std::string& value) const;
  /// Whether some value (or the flag itself) is modelled: the stack's code must apply it.
  bool modelled_for_some() const;
};

struct StackFlagTable {
  std::string stack;   ///< "sglang" or "vllm"
  std::string source;  ///< the file, relative to models/ (models/stacks/...)
  std::vector<StackFlag> rows;
  /// vLLM's parser also takes --max_model_len for --max-model-len.
  bool underscores = false;
  /// Other releases' spellings read as a flag of this release: earlier ones
  /// (models/stacks/*-older-spellings.csv; vLLM's may name a --speculative-config.KEY, and an empty
  /// flag is a switch that changes nothing now), and later releases' new names of one of its flags
  /// (the newer-flags table's `spelling_of` rows, with the release that brought them in `since`).
  struct OlderSpelling {
    std::string spelling, flag, why;
    std::string since;  ///< a later release's spelling: the first release that has it ("v0.5.14")
  };
  std::vector<OlderSpelling> older;
  /// The other release's spelling `spelling` (vLLM: underscores read as dashes), or null.
  const OlderSpelling* older_spelling(const std::string& spelling) const;

  /// Flags that later releases added (models/stacks/<stack>-<release>-newer-flags.csv), classed as
  /// this release's are, each with the first release that has it and its default there.
  struct NewerFlag {
    StackFlag row;
    std::string since;          ///< first release with the flag ("v0.5.14")
    std::string default_value;  ///< its default as the source writes it ("None", "False", "'auto'")
  };
  std::vector<NewerFlag> newer;
  std::string newer_release;  ///< the newest release the newer-flags table covers ("v0.5.18"), or ""
  std::string newer_source;   ///< that table's file (models/stacks/...)
  /// The later release's flag a spelling names exactly (a flag, an alias, --no-X of a bool flag), or null.
  const NewerFlag* newer_flag(const std::string& spelling, bool* negated = nullptr) const;

  /// The row a spelling names: exact (an alias, or --no-X of a bool flag, which sets `negated`),
  /// else a unique prefix of long spellings as argparse takes it (--tp for --tp-size). InputError
  /// naming `where` when the prefix is ambiguous; nullopt when nothing matches.
  const StackFlag* find(const std::string& spelling, const std::string& where, bool* negated = nullptr) const;
};

/// The table models/stacks/<file> (sglang-v0.5.2-server-args.csv, vllm-v0.11.0-serve-args.csv),
/// with the per-value classes of <release>-flag-values.csv where the stack has one. InputError
/// naming the file when it is missing or a row is malformed.
const StackFlagTable& stack_flag_table(std::string_view stack);

/// An environment variable's class at `value` (models/stacks/environment.csv): the row for that
/// value, else the variable's row, else refused. `value` of the result: the variable's name.
FlagValueClass environment_class(const std::string& name, const std::string& value);

std::string_view flag_class_name(FlagClass c);

/// Whether release `a` ("v0.5.14", "0.5.2") is `b` or later, comparing the dotted numbers.
bool release_at_least(const std::string& a, const std::string& b);

}  // namespace specsim
