#include "scenario/paths.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace specsim {

std::string models_dir() {
  if (const char* env = std::getenv("SPECSIM_MODELS"); env && *env) return env;
  return SPECSIM_MODELS_DIR;
}

bool is_file(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_input_file(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode));
}

bool is_dir(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> json_names_in(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(dir, ec))
    if (f.path().extension() == ".json" && is_file(f.path().string())) names.push_back(f.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace specsim
