#pragma once
// Helpers for CLI tests: run the built `specsim` binary and capture what it prints.
#include <filesystem>
#include <string>
#include <vector>

namespace specsim::test {

struct CliResult {
  int exit_code = -1;
  std::string out;  ///< stdout
  std::string err;  ///< stderr
};

/// Runs build/specsim (or another binary) with `args`; never goes through a shell.
CliResult run_specsim(const std::vector<std::string>& args);
/// The built `specsim` binary's path.
std::string specsim_bin();
CliResult run_program(const std::string& binary, const std::vector<std::string>& args);
/// Whether gnuplot is on the PATH (the plot tests check the images only where it is).
bool have_gnuplot();

/// A fresh empty folder under $TMPDIR, unique per call.
std::string fresh_dir();

/// Whole file as a string ("" when missing); whether it exists.
std::string slurp(const std::string& path);
bool exists(const std::string& path);
void write_text(const std::string& path, const std::string& text);

/// The repo's models/ and traces/ folders.
std::string models_path(const std::string& rel);
std::string traces_path(const std::string& rel);

/// Every file of the server-log folders (traces/sglang-logs, traces/vllm-logs).
std::vector<std::filesystem::path> server_log_files();

}  // namespace specsim::test
