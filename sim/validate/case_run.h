#pragma once
// A published case as one `specsim run`: its stated settings as run arguments and as the flags of
// the command that replays them.
#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "scenario/resolve.h"
#include "validate/published_case.h"

namespace specsim {

/// How validate runs a case: the run's arguments, and the same settings as `specsim run` flags
/// (the command that prints the case's whole cycle report, phase by phase).
struct CaseRun {
  RunArgs args;
  std::vector<std::string> flags;
  /// Sets one argument and appends it, as its flag, to the command.
  template <class Field, class Value>
  void put(const char* flag, Field& field, const Value& value) {
    field = value;
    flags.insert(flags.end(), {flag, fmt::format("{}", value)});
  }
};

/// What a case's run takes as its acceptance.
enum class CaseAcceptance {
  Stated,      ///< its accept length; else its measured spec tok/s (run derives the accept length)
  Measured,    ///< its measured spec tok/s; else its accept length (an anchor: reproduces its spec tok/s)
  LengthOnly,  ///< its accept length, or none (the acceptance then comes from an anchor)
  PlainOnly,   ///< none: plain decoding alone (a case whose speculation cannot be modelled)
};

/// The algorithm as the command line takes it ("EAGLE3", "EAGLE", "NEXTN"; "NONE" for a case that
/// measures plain decoding only): the sources word it in many ways.
std::string case_algorithm(const PublishedCase& c);

/// The case's run; std::nullopt, with the reason in `why_not`, when the case states too little to
/// model (no zoo model, GPU, tp or batch size). A case with neither an accept length nor a spec
/// tok/s runs plain decoding (`--speculative-algorithm NONE`).
std::optional<CaseRun> case_run(const PublishedCase& c, std::string& why_not,
                                CaseAcceptance acceptance = CaseAcceptance::Stated);

/// The topology a case runs on: its own, else the cluster of NVSwitch nodes over InfiniBand
/// (`nvswitch-ib`) when it spans nodes, else one NVSwitch node.
std::string case_topology(const PublishedCase& c);

/// "specsim run FLAGS...".
std::string case_run_command(const CaseRun& r);

}  // namespace specsim
