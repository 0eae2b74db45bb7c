#include "test_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace specsim::test {

CliResult run_program(const std::string& binary, const std::vector<std::string>& args) {
  const std::string dir = fresh_dir();
  const std::string out_path = dir + "/stdout", err_path = dir + "/stderr";
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(binary.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  CliResult r;
  const pid_t pid = fork();
  if (pid == 0) {
    const int o = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in = open("/dev/null", O_RDONLY);
    dup2(o, 1), dup2(e, 2), dup2(in, 0);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

std::string specsim_bin() { return SPECSIM_BIN; }

CliResult run_specsim(const std::vector<std::string>& args) { return run_program(SPECSIM_BIN, args); }

bool have_gnuplot() { return run_program("/bin/sh", {"-c", "command -v gnuplot"}).exit_code == 0; }

std::string fresh_dir() {
  // mkdtemp, not pid + counter: a pid reused by a later run (the sanitizer pass after the plain
  // one) would find the earlier run's files in "its" folder.
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string((tmp && *tmp) ? tmp : "/tmp") + "/specsim-test-XXXXXX";
  if (!mkdtemp(dir.data())) throw std::runtime_error("fresh_dir: mkdtemp failed under " + dir);
  return dir;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string models_path(const std::string& rel) { return std::string(SPECSIM_MODELS_DIR) + "/" + rel; }
std::string traces_path(const std::string& rel) { return std::string(SPECSIM_TRACES_DIR) + "/" + rel; }

std::vector<std::filesystem::path> server_log_files() {
  std::vector<std::filesystem::path> files;
  for (const char* folder : {"sglang-logs", "vllm-logs"})
    for (const auto& e : std::filesystem::directory_iterator(traces_path(folder))) files.push_back(e.path());
  return files;
}

}  // namespace specsim::test
