#pragma once
// A shared library opened on first use. cuBLASLt's static initializers alone take most of a
// second at process start (they run whether or not a GEMM is ever called), and every command of
// the CLI, every test that spawns it and `import specsim` paid it. The GPU replay's calls into
// cuBLASLt and NCCL go through the shims beside this file (cublaslt_shim.cc, nccl_shim.cc), which
// open the library the first time one of its functions is called.
#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

namespace specsim::lazy {

class LazyLibrary {
 public:
  /// `what`: the library in words, for errors; `paths`: where to look, in order (a full path the
  /// build found first, then the soname for the loader's own search).
  LazyLibrary(const char* what, std::initializer_list<const char*> paths);

  /// The address of `name`; throws std::runtime_error naming the library and the fix when it
  /// cannot be opened or lacks the function.
  void* symbol(const char* name);

 private:
  void open();
  std::once_flag once_;
  void* handle_ = nullptr;
  std::string what_, tried_, error_;
  std::vector<std::string> paths_;
};

/// `name` from `lib` as a pointer of the declared function's type.
template <typename Fn>
Fn function(LazyLibrary& lib, const char* name) {
  return reinterpret_cast<Fn>(lib.symbol(name));
}

}  // namespace specsim::lazy
