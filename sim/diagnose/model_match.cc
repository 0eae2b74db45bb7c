#include "diagnose/model_match.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "ingest/server_log.h"
#include "scenario/paths.h"
#include "scenario/sglang_cmdline.h"
#include "util/error.h"

namespace specsim::diagnose {

namespace fs = std::filesystem;

std::vector<std::string> zoo_models() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(models_dir(), ec))
    if (is_file((e.path() / "config.json").string())) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

ModelMatch match_model(const std::optional<std::string>& flag, const LogSummary& log) {
  if (flag) return {*flag, "--model"};
  std::string zoo;
  for (const auto& z : zoo_models()) zoo += (zoo.empty() ? "" : ", ") + z;
  if (!log.launch)
    throw InputError(fmt::format("{} has no {} to name the model: give --model NAME (the zoo: {}) or a config.json",
                                 log.file, ingest::launch_line_name(log.stack), zoo),
                     "--model");
  const auto& a = *log.launch;
  if (std::string z = zoo_name_of_model_arg(a.model_path); !z.empty())
    return {z, fmt::format("model_path '{}' ({}:{})", a.model_path, log.file, a.line)};
  if (a.served_model_name)
    if (std::string z = zoo_name_of_model_arg(*a.served_model_name); !z.empty())
      return {z, fmt::format("served_model_name '{}' ({}:{})", *a.served_model_name, log.file, a.line)};
  throw InputError(fmt::format("model_path '{}' is not a zoo model (the zoo: {}): give --model NAME or a config.json",
                               a.model_path, zoo),
                   fmt::format("--model; {}:{}", log.file, a.line));
}

}  // namespace specsim::diagnose
