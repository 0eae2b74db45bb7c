#pragma once
// One interface for every all-reduce backend the engine can cost (NCCL, our custom kernel, a
// fixed latency, or one a caller registers). Nothing switches on the backend: the engine, the
// replay, the verification and the fits ask the model the choice names (allreduce_model()) for
// time, host cost, words, refusals and its properties (floored, anchored, what runs it on a GPU,
// fittable). Adding a model-only backend: a file implementing AllReduceModel, one row in the
// table of allreduce_registry.cc, and tests.
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "scenario/hardware.h"
#include "scenario/run_spec.h"
#include "util/error.h"

namespace specsim {

/// What one all-reduce asks of a backend: the payload per rank, the group, and where it runs.
struct AllReduceQuery {
  double bytes = 0;                         ///< payload per rank
  int world = 1;                            ///< ranks in the group (>= 2 when a model is asked)
  bool graph = true;                        ///< inside a CUDA graph (else launched eagerly)
  const Hardware* hw = nullptr;             ///< GPU and topology
  const NcclSettings* nccl = nullptr;       ///< NCCL environment (NCCL_P2P_LEVEL, ALGO, PROTO)
  const AllReduceChoice* choice = nullptr;  ///< the user's choice, with its argument
};

/// What runs a backend's all-reduces on real GPUs (the replay, `check --replay`'s verification).
enum class GpuRunner {
  None,    ///< a cost model only: nothing to replay or verify
  Nccl,    ///< ncclAllReduce
  Custom,  ///< this project's kernels (kernels/), the variant the choice names
};

/// A backend's cost model. Stateless: everything a call needs comes in the query.
class AllReduceModel {
 public:
  virtual ~AllReduceModel() = default;
  /// GPU time of one all-reduce, microseconds, before anchors and the GPU's kernel minimum.
  virtual double time_us(const AllReduceQuery& q) const = 0;
  /// Host time to launch one call eagerly, microseconds (unused inside a CUDA graph).
  virtual double host_us(const AllReduceQuery& q) const = 0;
  /// What the backend runs for this payload, in words (the report's detail).
  virtual std::string describe(const AllReduceQuery& q) const = 0;
  /// Why the backend cannot run this query ("" when it can).
  virtual std::string refusal(const AllReduceQuery& q) const = 0;
  /// Whether measured NCCL anchors (extra per NCCL call) apply to this backend's calls.
  virtual bool takes_nccl_anchors() const { return false; }
  /// Whether this call goes through NCCL and so takes the NCCL anchors (a stack's backend sends
  /// only the calls its gates turn away to NCCL).
  virtual bool nccl_anchored(const AllReduceQuery&) const { return takes_nccl_anchors(); }
  /// Whether the GPU's kernel minimum (`kernel_min_us`) bounds its time from below; a latency
  /// the user states is taken as given.
  virtual bool floored() const { return true; }
  /// What runs it on real GPUs; None: the replay refuses it and the verification skips it.
  virtual GpuRunner gpu_runner() const { return GpuRunner::None; }
  bool replayable() const { return gpu_runner() != GpuRunner::None; }
  /// Why nothing runs it on a GPU (gpu_runner() None), as `check --replay` says it.
  virtual std::string no_kernel_note() const { return "not verified: a cost model with no GPU kernel here"; }
  /// Whether `calibrate --from` fits this backend's curve to replay measurements.
  virtual bool fittable() const { return false; }
};

/// The model for a parsed --allreduce choice. InputError naming --allreduce for an unknown name.
const AllReduceModel& allreduce_model(const AllReduceChoice& choice);

/// Makes a backend for `--allreduce NAME[:ARG]`; the factory validates ARG (InputError on bad).
using AllReduceMaker = std::function<std::unique_ptr<AllReduceModel>()>;

/// Adds a backend under `name` at run time (a test's dummy; built-in backends are rows of the
/// table in allreduce_registry.cc). InputError if the name is taken.
void register_allreduce_backend(const std::string& name, AllReduceMaker make);

/// The one refusal error, for every backend and every caller: names the backend, the reason
/// and the fix, on --allreduce.
InputError allreduce_refused(const AllReduceChoice& choice, const std::string& why);

}  // namespace specsim
