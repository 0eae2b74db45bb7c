#pragma once
// Where specsim's data lives (zoo models, hardware profiles, scenarios).
#include <string>
#include <vector>

namespace specsim {

/// The models/ folder: $SPECSIM_MODELS if set, else the source tree's models/ baked in at build.
std::string models_dir();

/// True when `path` names an existing regular file / directory.
bool is_file(const std::string& path);
/// A file a run can read as an input: a regular file, or a pipe (`<(...)`, /dev/stdin; read once
/// and kept, util/bounded_read.h).
bool is_input_file(const std::string& path);
bool is_dir(const std::string& path);

/// The names of the `*.json` files in `dir` without the extension, sorted ("" for none): the
/// GPUs and topologies models/hardware/ holds, for the errors that list the choices.
std::vector<std::string> json_names_in(const std::string& dir);

}  // namespace specsim
