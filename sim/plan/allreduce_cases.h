#pragma once
// The distinct all-reduces of a plan, as `check --replay` verifies them on the GPU against a CPU
// reference, and what each verification found. Data only, beside the plan, so the CUDA verifier
// (kernels/replay/allreduce_verify) fills it without reaching up to the check that reads it.
#include <cstddef>
#include <string>
#include <vector>

#include "plan/cycle_plan.h"

namespace specsim {

/// One distinct all-reduce of a phase: its payload per rank and how often a forward runs it.
struct AllReduceCase {
  PhaseKind phase = PhaseKind::Verify;
  std::size_t bytes = 0;  ///< payload per rank (bf16 elements x 2)
  int calls = 0;          ///< calls of this size in one forward, block repeats counted
};

/// The distinct (phase, payload) all-reduces of `plan`, in phase order then first appearance.
std::vector<AllReduceCase> distinct_allreduces(const CyclePlan& plan);

/// What verifying one all-reduce (or one backend that could not be verified) found.
struct VerifyResult {
  std::string backend;    ///< "custom:one-shot-push", "nccl", "fixed:40"
  std::string phase;      ///< phase name; empty for a line about the whole backend
  std::size_t bytes = 0;  ///< payload per rank
  int world = 0;
  bool verified = false;     ///< the call ran and its outputs were compared
  std::size_t wrong = 0;     ///< elements (over all ranks) differing from the CPU reference
  std::size_t elements = 0;  ///< elements compared (count x world)
  std::string note;          ///< why not verified, or an error the call threw
  bool failed() const { return wrong > 0 || (!verified && note.rfind("ERROR", 0) == 0); }
};

/// One line per result: "allreduce verify: custom:two-shot verify 65536 B x 8 ranks: ok ...".
std::string verify_line(const VerifyResult& r);

}  // namespace specsim
