#pragma once
// `specsim tune --layouts`: the draft-setting search of tune.h run once per parallel layout (tp x
// DP attention x ep, as SGLang lays a server out on the box's GPUs), so the ranking says which
// layout makes speculation pay. A layout is one entry of each axis; a pipeline-parallel size
// would be one more field and one more loop in auto_layouts().
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "scenario/parallel_layout.h"
#include "tune/tune.h"

namespace specsim::tune {

/// One layout searched: SGLang's --tp-size, --enable-dp-attention --dp, --ep-size.
struct LayoutChoice {
  int tp = 1;
  int dp = 1;  ///< DP attention ranks (1 with dp_attention off)
  bool dp_attention = false;
  int ep = 1;
  /// "tp8-dp8-ep8": the form --layouts takes back.
  std::string label() const;
};

/// What auto_layouts() enumerates over.
struct LayoutSpace {
  int gpus = 8;            ///< GPUs of the box (every node)
  int routed_experts = 0;  ///< 0: a dense model (tp only)
  A2aBackend a2a = A2aBackend::None;
};

/// Every layout SGLang v0.5.2 accepts on the box (scenario/parallel_layout.h's rules): tp a
/// divisor of the GPUs; without DP attention ep a divisor of tp that divides the routed experts;
/// with it, dp a divisor of tp from 2 up, the same ep choices; an all-to-all backend sets ep = tp.
std::vector<LayoutChoice> auto_layouts(const LayoutSpace& space);

/// Most layouts one tune run searches (each is a whole search).
constexpr std::size_t kMaxLayouts = 64;

/// --layouts: "auto" or a comma list of tpN[-dpM][-epK] (dp: DP attention on). InputError naming
/// --layouts for a malformed item, a layout SGLang refuses (dp > tp, dp or ep not dividing tp, ep
/// not dividing the experts: parse_layout's reason), one past the box's GPUs, or more than
/// kMaxLayouts.
std::vector<LayoutChoice> parse_layouts(const std::string& text, const LayoutSpace& space);

/// One layout's search: its result, or why it was skipped (does not fit GPU memory at any batch
/// size asked, the model does not split that way, ...).
struct LayoutOutcome {
  LayoutChoice layout;
  std::optional<Scenario> scenario;  ///< as resolved for this layout (absent when skipped)
  std::optional<TuneResult> result;
  std::string skipped;  ///< the refusal, as `specsim run` gives it
};

/// A layout's best row at one batch size: by tok/s and by speedup over plain decoding.
struct LayoutBest {
  int batch_size = 0;
  double plain_tok_s = 0;
  const TuneRow* by_tok_s = nullptr;  ///< null: nothing evaluated at this batch size
  const TuneRow* by_speedup = nullptr;
  std::string skipped;  ///< the batch size's refusal (memory), if any
};
std::vector<LayoutBest> layout_bests(const LayoutOutcome& o);

/// The search of `in` (its acceptance, batch sizes, backends and limits) on each layout, whose
/// scenario `resolve` gives; a layout `resolve` or the search refuses (InputError) is skipped with
/// the reason. InputError naming --layouts when every layout is.
std::vector<LayoutOutcome> run_layouts(const TuneInput& in, const std::vector<LayoutChoice>& layouts,
                                       const std::function<Scenario(const LayoutChoice&)>& resolve);

}  // namespace specsim::tune
