#include "spec/paths.h"

#include <sys/stat.h>

#include <cstdlib>

namespace specsim {

std::string models_dir() {
  if (const char* env = std::getenv("SPECSIM_MODELS"); env && *env) return env;
  return SPECSIM_MODELS_DIR;
}

bool is_file(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool is_dir(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace specsim
