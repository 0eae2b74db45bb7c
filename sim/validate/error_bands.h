#pragma once
// The error bands every prediction is printed with: the held-out errors of the published cases
// (validate) and of the rows predicted from another row's measurements (validate --transfer),
// grouped by class and reduced to the range the true value fell in. `specsim validate
// --write-error-bands FILE` writes them; report/error_band.h reads them.
#include <nlohmann/json.hpp>

#include "validate/transfer.h"
#include "validate/validate.h"

namespace specsim {

/// The bands file's JSON (report/error_band.h describes its fields): every class with held-out
/// errors, unanchored from `v`, anchored from `t`.
nlohmann::json error_bands_json(const ValidateResult& v, const TransferResult& t);

}  // namespace specsim
