#pragma once
// The values of a pasted command's flags: numbers as the stacks parse them, Hugging Face ids of
// zoo models, draft paths used as given.
#include <optional>
#include <string>
#include <vector>

#include "scenario/resolve.h"

namespace specsim {

/// An integer; InputError naming `at` otherwise.
int command_int(const std::string& v, const std::string& at);
/// A number; InputError naming `at` otherwise.
double command_double(const std::string& v, const std::string& at);
/// An integer of at least 1 (a limit such as a context length or a request count).
int command_positive_int(const std::string& v, const std::string& at);
/// A share in (0, 1] (a memory fraction; vLLM's own range); InputError naming `at` and the range otherwise.
double command_fraction(const std::string& v, const std::string& at);
/// vLLM's human-readable integers: 32768, 32k (x1000), 32K (x1024), 1m, 1M, 1g, 1G.
long long command_human_int(const std::string& v, const std::string& at);

/// The zoo name of a Hugging Face model id ("" when it is not in the zoo).
std::string zoo_name_of_hf_id(const std::string& id);

/// The zoo model a pasted --model-path / --model names: a Hugging Face id zoo_name_of_hf_id knows,
/// a local path or another organisation's id whose last part is such an id's (
/// /models/Llama-3.1-8B-Instruct), or a zoo name; "" when none.
std::string zoo_name_of_model_arg(const std::string& arg);

/// A quantized release of a zoo model, named by its suffix (Qwen3-8B-FP8-dynamic, DeepSeek-R1-FP4,
/// ...-AWQ): the zoo model of the name without the suffix, the weight dtype the suffix says
/// (fp8, nvfp4, int4) and the suffix; nullopt when the name has no such suffix or names no zoo model.
struct QuantizedRelease {
  std::string zoo, dtype, suffix;
};
std::optional<QuantizedRelease> quantized_release(const std::string& arg);

/// A pasted --dtype VALUE after a quantized release set the weights (fp8, nvfp4, int4): VALUE is the
/// activations' dtype (auto, a 16-bit one), the weights stay, said; true when kept.
bool keeps_quantized_weights(const RunArgs& a, const std::string& value, std::vector<std::string>& notes);

/// Whether `path` (a log's model_path: a Hugging Face id or a folder) names the model `name`: its
/// zoo name when the zoo knows the id, else its last component against the name.
bool names_target(const std::string& path, const std::string& name);

/// A pasted draft into `a`: a config.json, a folder holding one, or a zoo draft, used as given
/// (draft_model_path). Any other name (a Hugging Face id, a path on the serving machine, a bare
/// folder name) is kept as remote_draft: the scenario then reads a zoo draft in its place and says
/// so, or refuses when none stands in (scenario/resolve.cc, scenario/draft_stand_in.h).
void set_pasted_draft(RunArgs& a, const std::string& v, const std::string& at);

/// A pasted --model-path / --model `v`: a config or folder here as given, else the zoo model it
/// names (zoo_name_of_model_arg), or a quantized release of one with its weights' dtype
/// (quantized_release), said in `notes`; else as given (resolve refuses what it cannot read).
void set_pasted_model(RunArgs& a, const std::string& v, std::vector<std::string>& notes);

}  // namespace specsim
