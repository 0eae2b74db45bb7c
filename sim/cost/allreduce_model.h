#pragma once
// One interface for every all-reduce backend the engine can cost (NCCL, our custom kernel, a
// fixed latency, or one a caller registers). The engine never switches on the backend: it asks
// the model the choice names (allreduce_model()) for time, host cost, words and refusals.
// Adding a backend: a file implementing AllReduceModel, one row in the factory
// (allreduce_registry.cc) or a register_allreduce_backend() call, and tests.
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "spec/hardware.h"
#include "spec/run_spec.h"
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
};

/// The model for a parsed --allreduce choice. InputError naming --allreduce for an unknown name.
const AllReduceModel& allreduce_model(const AllReduceChoice& choice);

/// Makes a backend for `--allreduce NAME[:ARG]`; the factory validates ARG (InputError on bad).
using AllReduceMaker = std::function<std::unique_ptr<AllReduceModel>()>;

/// Adds a backend under `name` (a plugin or a test's dummy). InputError if the name is taken.
void register_allreduce_backend(const std::string& name, AllReduceMaker make);

/// The one refusal error, for every backend and every caller: names the backend, the reason
/// and the fix, on --allreduce.
InputError allreduce_refused(const AllReduceChoice& choice, const std::string& why);

}  // namespace specsim
