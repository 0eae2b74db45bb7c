#include "lazy_library.h"

#include <dlfcn.h>

#include <stdexcept>

namespace specsim::lazy {

LazyLibrary::LazyLibrary(const char* what, std::initializer_list<const char*> paths) : what_(what) {
  for (const char* p : paths)
    if (p != nullptr && *p != '\0') paths_.emplace_back(p);
}

void LazyLibrary::open() {
  for (const std::string& p : paths_) {
    handle_ = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ != nullptr) return;
    const char* e = dlerror();
    error_ = e != nullptr ? e : "not found";
    tried_ += (tried_.empty() ? "" : ", ") + p;
  }
}

void* LazyLibrary::symbol(const char* name) {
  std::call_once(once_, [this] { open(); });
  if (handle_ == nullptr)
    throw std::runtime_error("the GPU replay needs " + what_ + " and could not open it (tried " + tried_ +
                             "; last error: " + error_ +
                             "); install the CUDA toolkit's library or add its folder "
                             "to LD_LIBRARY_PATH");
  void* f = dlsym(handle_, name);
  if (f == nullptr)
    throw std::runtime_error(what_ + " has no function " + name +
                             ": the library is older than the headers "
                             "specsim was built with; rebuild against the installed toolkit");
  return f;
}

}  // namespace specsim::lazy
