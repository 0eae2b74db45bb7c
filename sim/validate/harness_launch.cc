#include "validate/harness_launch.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <vector>

#include "spec/paths.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

SingleThreadLaunch load_single_thread_launch() {
  const std::string path = (std::filesystem::path(models_dir()) / "nccl" / "tuning.json").string();
  const nlohmann::json j = read_json_file(path);
  const std::string w = path + ": single_thread_launch";
  if (!j.contains("single_thread_launch") || !j["single_thread_launch"].is_object())
    throw InputError("missing the single_thread_launch block", w);
  const auto& b = j["single_thread_launch"];
  SingleThreadLaunch l;
  l.per_gpu_us = sourced_number(b, "per_gpu_us", w);
  l.group_us = sourced_number(b, "group_us", w);
  if (l.per_gpu_us <= 0 || l.group_us < 0) throw InputError("per_gpu_us must be > 0 and group_us >= 0", w);
  return l;
}

HarnessTime nccl_tests_iteration_us(double collective_us, int gpus_per_thread, int iters,
                                    const SingleThreadLaunch& launch) {
  if (gpus_per_thread <= 1 || iters < 1) return {collective_us, 0, false};
  const double host = launch.host_us(gpus_per_thread);
  return {std::max(host, collective_us) + std::min(host, collective_us) / iters, host, host > collective_us};
}

std::optional<int> nccl_tests_header_int(const std::string& header_line, const std::string& key) {
  std::vector<std::string> tok, want;
  std::istringstream in(header_line), k(key);
  for (std::string t; in >> t;) tok.push_back(t);
  for (std::string t; k >> t;) want.push_back(t);
  if (want.empty()) return std::nullopt;
  want.back() += ':';
  // A key word is letters only ("warmup", "agg"): a match preceded by one is a longer key.
  const auto is_word = [](const std::string& t) {
    return std::all_of(t.begin(), t.end(), [](unsigned char c) { return std::isalpha(c) != 0; });
  };
  for (std::size_t i = 0; i + want.size() < tok.size(); ++i) {
    if (!std::equal(want.begin(), want.end(), tok.begin() + static_cast<std::ptrdiff_t>(i))) continue;
    if (i > 0 && is_word(tok[i - 1])) continue;
    const std::string& v = tok[i + want.size()];
    char* end = nullptr;
    const long n = std::strtol(v.c_str(), &end, 10);
    return (end == v.c_str() + v.size() && n >= 1 && n <= 1000000) ? static_cast<int>(n) : 0;
  }
  return std::nullopt;
}

}  // namespace specsim
