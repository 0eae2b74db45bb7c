#pragma once
// Where specsim's data lives (zoo models, hardware profiles, scenarios).
#include <string>

namespace specsim {

/// The models/ folder: $SPECSIM_MODELS if set, else the source tree's models/ baked in at build.
std::string models_dir();

/// True when `path` names an existing regular file / directory.
bool is_file(const std::string& path);
bool is_dir(const std::string& path);

}  // namespace specsim
