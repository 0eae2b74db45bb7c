// specsim._native: runs one `specsim` subcommand in-process, with the command line's own flag
// parsing, checks and error boundary, and hands back its exit code and what it printed. The
// Python package (specsim/__init__.py) turns that into data and exceptions, so Python and the
// command line cannot disagree on a setting or an error.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "report/report.h"

namespace py = pybind11;

namespace {

// std::cout and std::cerr pointed at strings for one call (every subcommand prints through them).
class Capture {
 public:
  Capture() : old_out_(std::cout.rdbuf(out_.rdbuf())), old_err_(std::cerr.rdbuf(err_.rdbuf())) {}
  ~Capture() {
    std::cout.rdbuf(old_out_);
    std::cerr.rdbuf(old_err_);
  }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  std::string out() const { return out_.str(); }
  std::string err() const { return err_.str(); }

 private:
  std::ostringstream out_, err_;
  std::streambuf* old_out_;
  std::streambuf* old_err_;
};

// specsim's output files install SIGINT/SIGTERM/SIGHUP handlers that remove temporary files and
// end the process; in Python they are put back after each call, so Ctrl-C stays a
// KeyboardInterrupt between calls.
class SignalGuard {
 public:
  SignalGuard() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], nullptr, &old_[i]);
  }
  ~SignalGuard() {
    for (std::size_t i = 0; i < kSignals.size(); ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> old_{};
};

// The streams are process-wide: one call at a time.
std::mutex call_mutex;

// `argv` as after `specsim` on a command line (a subcommand and its flags, --version, or nothing),
// dispatched as the command line does: same output, same exit code, an error line for a bad one.
py::tuple call(const std::vector<std::string>& argv) {
  std::vector<std::string> args = {"specsim"};
  args.insert(args.end(), argv.begin(), argv.end());
  std::vector<char*> ptrs;
  for (auto& a : args) ptrs.push_back(a.data());
  ptrs.push_back(nullptr);
  int rc = 0;
  std::string out, err;
  {
    py::gil_scoped_release release;
    const std::lock_guard lock(call_mutex);
    const SignalGuard signals;
    Capture capture;
    rc = specsim::cli::dispatch(static_cast<int>(args.size()), ptrs.data());
    out = capture.out(), err = capture.err();
  }
  return py::make_tuple(rc, py::bytes(out), py::bytes(err));
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "specsim's subcommands run in-process (use the package `specsim`, not this module)";
  // As the command line does: never NVLink SHARP in NCCL, whichever call starts NCCL (replay).
  ::setenv("NCCL_NVLS_ENABLE", "0", 1);
  m.attr("version") = specsim::kSpecsimVersion;
  m.def("call", &call, py::arg("argv"),
        "Runs `specsim ARGV...` in-process; returns (exit code, stdout bytes, stderr bytes).");
  m.def("commands", [] {
    std::vector<std::string> names;
    for (const auto& c : specsim::cli::commands()) names.emplace_back(c.name);
    return names;
  });
}
