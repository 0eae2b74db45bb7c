#pragma once
// `specsim validate --transfer`: accuracy that transfers. In each family of published rows (one
// user's deployment, validate/family.h) the anchor row's measurements become a run's anchors, as
// its user would record them (`specsim run ... --measured-baseline-tok-s B --measured-spec-tok-s S
// --save-scenario FILE`), and every other row is predicted at its own settings from that file
// (`specsim run --scenario FILE <the row's settings>`), with its own accept length where it states
// one. Errors are kept per family and overall, fit and held-out apart.
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "anchors/anchors.h"
#include "validate/case_run.h"
#include "validate/data_bound.h"
#include "validate/error_stats.h"
#include "validate/family.h"

namespace specsim {

/// One row of a family, predicted from the family's anchor (or, for the anchor row, its own run).
struct TransferRow {
  PublishedCase c;
  bool anchor = false;
  std::string command;                                        ///< the `specsim run` that gives this prediction
  std::optional<double> baseline_tok_s, spec_tok_s, speedup;  ///< predicted, per request stream
  std::optional<double> accept_len;                           ///< the accept length the run used
  std::string accept_source;                                  ///< where the run took it from, in words
  std::string spec_skipped;                                   ///< why the speculation is not predicted ("" when it is)
  std::string refused;                                        ///< the run refused the row: no prediction, and why
  /// The least error any prediction from the anchor can have on this row, set by the family's own
  /// measurements (validate/data_bound.h); not for the anchor or a baseline that is its own figure.
  std::optional<DataBound> spec_bound, baseline_bound;
};

/// One family: its anchor's recorded measurements and every row predicted from them.
struct TransferFamily {
  CaseFamily family;
  std::string scenario_file;    ///< the file the anchor's run saves and the rows' runs read
  std::string anchor_command;   ///< records the anchor's measurements (`--save-scenario`)
  bool anchor_refused = false;  ///< the anchor's command exits 2 (not_scored says why)
  std::string not_scored;       ///< why the family is listed but not scored ("" when scored)
  /// The anchor's cycle anchor (its spec tok/s with its stated accept length): the cycle time the
  /// model does not explain and its split per draft forward and per verify, carried to every row.
  std::optional<AnchorEntry> anchor_cycle;
  std::vector<TransferRow> rows;  ///< in the family's order; empty when the anchor cannot be used
  /// Errors of the predicted rows (the anchor left out, and a baseline that is the anchor's own
  /// figure): [0] fit, [1] held out.
  ErrorStats baseline[2], spec[2];
};

/// What a predicted row changes from its family's anchor, the largest change first: how far its
/// what-if reaches (a batch size differs; else the draft's top-k, a chain made a tree or a tree's
/// width changed; else the other draft settings: steps, draft tokens, algorithm; else only the
/// workload).
enum class TransferChange { BatchSize, TopK, DraftSettings, WorkloadOnly };
inline constexpr TransferChange kTransferChanges[] = {TransferChange::BatchSize, TransferChange::TopK,
                                                      TransferChange::DraftSettings, TransferChange::WorkloadOnly};
/// "batch size", "top-k", "other draft settings", "workload only".
const char* transfer_change_name(TransferChange c);
/// What row `r` of family `t` changes from the family's anchor.
TransferChange transfer_change(const TransferRow& r, const TransferFamily& t);

struct TransferResult {
  std::string set;
  std::vector<TransferFamily> families;
  std::vector<SkippedCase> skipped;
  ErrorStats baseline[2], spec[2], speedup[2];  ///< every scored family's predicted rows: [0] fit, [1] held out
  /// The held-out spec tok/s errors by what the row changes from its anchor (kTransferChanges' order).
  ErrorStats spec_by_change[std::size(kTransferChanges)];
  /// Held-out rows whose error the family's own measurements bound (spec_bound, baseline_bound).
  struct BoundedRow {
    std::string id;
    double bound_pct, error_pct;
  };
  std::vector<BoundedRow> spec_bounded, baseline_bounded;
  std::vector<Target> targets;
};

/// A figure the rows are scored on.
enum class TransferFigure { Baseline, Spec, Speedup };
/// The predicted rows of every scored family on one figure, held-out or fit rows (the anchor row
/// and a baseline that is the anchor's own figure left out): what the family errors are made of.
std::vector<ErrorPoint> transfer_points(const TransferResult& r, bool held_out, TransferFigure fig);
/// Groups the cases of `set_dir` into families and predicts each family's rows from its anchor.
/// `case_id` non-empty: that case's family alone (InputError naming --case when no case has the
/// id). InputError naming file:field on a bad case file.
TransferResult run_transfer(const std::string& set_dir, const std::string& label = "", const std::string& case_id = "");

/// A table per family (anchor row, each predicted row: measured, predicted, error of baseline tok/s,
/// spec tok/s and speedup), the family's spec tok/s errors, then the overall errors and the targets.
std::string transfer_text(const TransferResult& r);
/// The same data; each row carries its `command`, each family its `anchor_command`.
nlohmann::json transfer_json(const TransferResult& r);

}  // namespace specsim
