#pragma once
// The sweep's outputs: CSV (one row per evaluated point, every setting and figure) and JSON (the
// same rows under a header that names the scenario, the axes and what was skipped).
#include <string>
#include <vector>

#include "sweep/sweep.h"

namespace specsim::sweep {

/// The CSV header's column names, in order.
std::vector<std::string> csv_columns();

/// The CSV text: header line, then one line per evaluated point in grid order. Formatting is split
/// over `threads`; the bytes do not depend on it.
std::string sweep_csv(const SweepResult& r, int threads);

/// The JSON text: {specsim_version, title, model, hardware, axes, points, evaluated, skipped,
/// columns, rows: [[...], ...]} with rows matching csv_columns().
std::string sweep_json(const SweepResult& r, const Grid& grid, int threads);

/// The one-paragraph summary for stderr: counts, and the first ten skip reasons with their
/// counts (the rest summed on one line).
std::string sweep_summary(const SweepResult& r, double seconds, int threads);

}  // namespace specsim::sweep
