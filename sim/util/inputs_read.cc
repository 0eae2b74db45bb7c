#include "util/inputs_read.h"

#include <mutex>

namespace specsim {

namespace {
std::mutex g_mutex;
std::vector<InputRead>& registry() {
  static std::vector<InputRead> r;
  return r;
}
}  // namespace

void note_input_read(const std::string& path, unsigned long long dev, unsigned long long ino) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (const auto& i : registry())
    if (i.dev == dev && i.ino == ino) return;
  registry().push_back({path, dev, ino});
}

std::vector<InputRead> inputs_read() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return registry();
}

}  // namespace specsim
