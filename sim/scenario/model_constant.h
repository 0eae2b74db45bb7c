#pragma once
// One sourced number of a models/ file that the engine reads once: a model constant, not a setting.
#include <string>

namespace specsim {

/// `key`'s value in models/`file` ({"value", "source"}), which must lie in [lo, hi] (`meaning`
/// says what the range stands for); InputError naming the file otherwise.
double model_constant(const std::string& file, const std::string& key, double lo, double hi,
                      const std::string& meaning);

}  // namespace specsim
