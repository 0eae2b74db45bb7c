#pragma once
// What `specsim calibrate --from` takes from replay reports (read once, replay_report/replay_report.h):
// the phases for the compute fit and, from multi-GPU reports, each phase's all-reduces measured
// alone. Checked field by field: InputError naming the file and field.
#include <string>
#include <vector>

#include "replay_report/replay_report.h"
#include "scenario/hardware.h"
#include "scenario/run_spec.h"

namespace specsim {

/// One replayed phase and where it came from.
struct ReplayPoint {
  std::string file;
  std::string label;  ///< e.g. "llama-3.1-8b tp1 verify t=4"
  PhaseMeasurement phase;
};

/// Reads the phases of replay reports; InputError naming the file and field.
std::vector<ReplayPoint> load_replay_points(const std::vector<std::string>& files, const std::string& flag);
/// The same from reports already read.
std::vector<ReplayPoint> replay_points(const std::vector<ReplayReport>& reports, const std::string& flag);

/// Phases of multi-GPU reports as the compute fit sees them: collective ops removed and the phase
/// time less the collectives measured alone (each less one graph launch of `gpu`). Phases of
/// one-GPU reports are returned unchanged.
std::vector<ReplayPoint> compute_share(std::vector<ReplayPoint> points, const GpuProfile& gpu);

/// One replayed phase's all-reduces: how many, their payload, and what they took together.
struct AllReducePoint {
  std::string file, label;
  std::string device;       ///< the report's device line
  AllReduceChoice backend;  ///< what the report says ran them
  std::string ran;          ///< the replay's own note on the first all-reduce ("custom all-reduce, one-shot-pull")
  int world = 0;            ///< ranks
  int calls = 0;            ///< all-reduces in one forward, block repeats counted
  double bytes = 0;         ///< payload per call and rank
  double measured_us = 0;   ///< all of them alone in one CUDA graph (median replay)
};

/// The all-reduce points of the multi-GPU reports among `files` (a one-GPU report gives none).
/// Reports whose ranks shared one GPU are skipped with a line in `skipped` (they do not measure the
/// interconnect). InputError naming the file and field when times, sizes or backend are unusable.
std::vector<AllReducePoint> load_allreduce_points(const std::vector<std::string>& files,
                                                  std::vector<std::string>* skipped = nullptr);
/// The same from reports already read.
std::vector<AllReducePoint> allreduce_points(const std::vector<ReplayReport>& reports,
                                             std::vector<std::string>* skipped = nullptr);

}  // namespace specsim
