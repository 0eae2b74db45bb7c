#include "report/gnuplot.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "util/error.h"
#include "util/json_io.h"
#include "util/output_files.h"

namespace specsim {

namespace fs = std::filesystem;

namespace {

std::string find_gnuplot() {
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "");
  for (std::string dir; std::getline(ss, dir, ':');) {
    if (dir.empty()) continue;
    const std::string p = dir + "/gnuplot";
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

std::string terminal(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  if (ext == ".svg") return "set terminal svg size 1100,650 font 'sans,12' noenhanced background 'white'\n";
  return "set terminal pngcairo size 1100,650 font 'sans,11' noenhanced background 'white'\n";
}

void run_gnuplot(const std::string& gnuplot, const std::string& script, const std::string& log) {
  // The log is made here, not by the child: a child that made it after a signal's clean-up would
  // leave it behind. Kept off fds 0-2, so the child's dup2 onto 1 and 2 always clears close-on-exec.
  int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd >= 0 && log_fd <= 2) {
    const int moved = ::fcntl(log_fd, F_DUPFD_CLOEXEC, 3);
    ::close(log_fd);
    log_fd = moved;
  }
  if (log_fd < 0)
    throw EnvironmentError(
        "cannot write gnuplot's log in " + fs::path(log).parent_path().string() + ": " + std::strerror(errno),
        "free disk space or file descriptors, or set TMPDIR to another writable folder");
  std::optional<SignalsHeld> held(std::in_place);  // no gap between fork() and the child's registration
  const pid_t pid = fork();
  if (pid == 0) {
    ::dup2(log_fd, 1), ::dup2(log_fd, 2);
    default_temp_handlers();  // as exec would, before the mask lets a signal in
    ::sigprocmask(SIG_SETMASK, &held->before(), nullptr);
    execl(gnuplot.c_str(), "gnuplot", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  ::close(log_fd);
  if (pid < 0) throw EnvironmentError("cannot start gnuplot", "the system refused a new process");
  std::optional<TempWriter> writer(std::in_place, pid);
  held.reset();
  // Wait without reaping, unregister, then reap: a signal in between never kills a reused pid.
  siginfo_t exited{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &exited, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  writer.reset();
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream in(log);
    std::string line, last;
    while (std::getline(in, line))
      if (!line.empty()) last = line;
    throw InputError("gnuplot failed" + (last.empty() ? std::string() : ": " + last), "--plot");
  }
}

}  // namespace

// A gnuplot single-quoted string ('' stands for a quote inside). A control character (a newline
// ends the command and starts a new one, e.g. `system(...)`) or a backquote (command substitution)
// never reaches a script: every user string was checked by plot_safe() first; this is the backstop.
std::string gnuplot_quote(const std::string& s) {
  plot_safe(s, "plot text", "--plot");
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

void plot_safe(const std::string& text, const std::string& what, const std::string& where) {
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == '`')
      throw InputError(what + " holds a control character or a backquote, which a gnuplot script cannot carry safely",
                       where);
  }
}

void check_plot_names(const Scenario& s) {
  plot_safe(s.target.name, "the model name (from its folder or file name)", "--model-path");
  plot_safe(s.hw.gpu.name, "the GPU name", "--hardware: gpu.name");
  plot_safe(s.hw.topo.name, "the topology name", "--hardware: topology.name");
}

void check_plot_target(const std::string& path) {
  plot_safe(path, "the plot path", "--plot");
  const std::string ext = fs::path(path).extension().string();
  if (ext != ".png" && ext != ".svg")
    throw InputError("plot file must end in .png or .svg, got '" + path + "'", "--plot");
}

void check_plot_tools() {
  if (find_gnuplot().empty()) throw EnvironmentError("plots need gnuplot on the PATH", "apt-get install gnuplot-nox");
  temp_folder();  // before the sweep runs, not after
}

void render_gnuplot(const std::string& path, const std::string& script_path, const std::string& data,
                    const std::string& commands) {
  check_plot_target(path);
  plot_safe(script_path, "the plot script path", "--plot-script");
  check_plot_tools();
  check_outputs({{path, "--plot"}, {script_path, "--plot-script"}});
  // $TMPDIR, else /tmp. Registered so that SIGINT/SIGTERM removes them too (files before their folder).
  const TempPath dir_guard(TempPath::NewFolder{(fs::path(temp_folder()) / "specsim-plot-XXXXXX").string()});
  if (dir_guard.path().empty())
    throw EnvironmentError("cannot make a temporary folder for gnuplot", "set TMPDIR to an existing writable folder");
  const fs::path dir = dir_guard.path();
  const TempPath script_guard((dir / "plot.gp").string()), log_guard((dir / "gnuplot.log").string());
  TempPath out_guard(temp_name_beside(path));
  const std::string tmp_out = out_guard.path();
  // Data inline as a gnuplot datablock: one file to run, nothing to quote in paths.
  const std::string script = terminal(path) + "set output " + gnuplot_quote(tmp_out) + "\n$DATA << EOD\n" + data +
                             "EOD\n" + commands + "unset output\n";
  { std::ofstream(dir / "plot.gp") << script; }
  try {
    run_gnuplot(find_gnuplot(), (dir / "plot.gp").string(), (dir / "gnuplot.log").string());
    std::error_code ec;
    if (!fs::exists(tmp_out) || fs::file_size(tmp_out, ec) == 0)
      throw InputError("gnuplot wrote no image to " + path, "--plot");
    fs::rename(tmp_out, path, ec);
    if (ec) throw InputError("cannot move the plot into place at " + path, "--plot");
    out_guard.keep();
    if (!script_path.empty()) {  // after the image: a failed plot leaves no script behind either
      const std::string kept =
          fmt::format("{}set output {}\n$DATA << EOD\n{}EOD\n{}", terminal(path), gnuplot_quote(path), data, commands);
      write_file_atomic(script_path, kept, "--plot-script");
    }
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp_out, ec);
    fs::remove_all(dir, ec);
    throw;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace specsim
