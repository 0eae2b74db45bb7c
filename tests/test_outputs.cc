// Output files: checked all together before any is written; `-`, devices, fifos, folders,
// symbolic links, inputs and duplicate outputs refused; temporary files gone on every exit path.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <thread>

#include "hostile_cases.h"
#include "util/output_files.h"

using namespace specsim::test;

namespace {

std::vector<std::string> listing(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

const std::string kReport = "replay/h200/llama-3.1-8b_decode_t1.json";

}  // namespace

TEST_CASE("outputs: nothing is written when one output of several is bad") {
  const std::string dir = fresh_dir();
  write_text(dir + "/old.csv", "old\n");
  const std::string png = dir + "/p.png";
  expect_bad_input({
      {{"run", "--trace", dir + "/t.json", "--csv", dir + "/missing/c.csv"}, "(--csv)"},
      {{"sweep", "-o", dir + "/old.csv", "--json", dir + "/missing/x.json"}, "(--json)"},
      {{"sweep", "-o", dir + "/old.csv", "--plot", png, "--plot-script", dir + "/missing/s.gp"}, "(--plot-script)"},
      {{"sweep", "-o", dir + "/old.csv", "--plot", dir + "/missing/p.png"}, "(--plot)"},
      {{"ingest", "--replay-report", traces_path(kReport), "--trace", dir + "/t.json", "--csv", dir + "/no/c.csv"},
       "(--csv)"},
  });
  CHECK(listing(dir) == std::vector<std::string>{"old.csv"});
  CHECK(slurp(dir + "/old.csv") == "old\n");
}

TEST_CASE("outputs: an output that is an input or another output is refused, the input kept") {
  const std::string dir = fresh_dir(), report = dir + "/r.json", log = dir + "/nccl.txt", prof = dir + "/hw.json";
  write_text(report, slurp(traces_path(kReport)));
  write_text(log, slurp(traces_path("nccl-tests-a100sxm4x8-nvlink.txt")));
  write_text(prof, "{\"gpu\": " + slurp(models_path("hardware/gpus/h200.json")) +
                       ", \"topology\": " + slurp(models_path("hardware/topologies/nvswitch.json")) + "}");
  write_text(dir + "/config.json", slurp(models_path("llama-3.1-8b/config.json")));
  const std::string before = slurp(report);
  expect_bad_input({
      {{"ingest", "--replay-report", report, "--trace", report}, "also an input"},
      {{"ingest", "--replay-report", report, "--csv", dir + "/./r.json"}, "also an input"},
      {{"calibrate", "--from", report, "--hardware", "h200:nvswitch", "-o", report}, "also an input"},
      {{"calibrate", "--nccl-tests", log, "--hardware", "a100-sxm:nvswitch", "-o", log}, "also an input"},
      {{"calibrate", "--nccl-tests", log, "--hardware", prof, "-o", prof}, "also an input"},
      {{"run", "--anchor-trace", traces_path("torch-trace-verify-synthetic.json"), "--trace",
        traces_path("torch-trace-verify-synthetic.json")},
       "also an input"},
      {{"run", "--model-path", dir + "/config.json", "--csv", dir + "/config.json"}, "also an input"},
      {{"replay", "--model-path", dir + "/config.json", "-o", dir + "/config.json"}, "also an input"},
      {{"run", "--trace", dir + "/a.json", "--csv", dir + "/./a.json"}, "the same file as --trace"},
      {{"sweep", "-o", dir + "/a.csv", "--json", dir + "/a.csv"}, "the same file as --output"},
      {{"ingest", "--replay-report", report, "--trace", dir + "/x", "--csv", dir + "/x"}, "the same file"},
  });
  CHECK(slurp(report) == before);
  CHECK_FALSE(exists(dir + "/a.json"));
  CHECK_FALSE(exists(dir + "/a.csv"));
}

TEST_CASE("outputs: '-', devices, fifos, folders and symbolic links are not replaced") {
  const std::string dir = fresh_dir(), fifo = dir + "/fifo", link = dir + "/link.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  REQUIRE(::symlink((dir + "/target.json").c_str(), link.c_str()) == 0);
  ::mkdir((dir + "/folder").c_str(), 0755);
  const std::string report = traces_path(kReport);
  expect_bad_input({
      {{"run", "--trace", "-"}, "'-' is not a file"},
      {{"run", "--csv", "-"}, "'-' is not a file"},
      {{"sweep", "--json", "-"}, "'-' is not a file"},
      {{"ingest", "--replay-report", report, "--csv", "-"}, "'-' is not a file"},
      {{"calibrate", "--from", report, "--hardware", "h200:nvswitch", "-o", "-"}, "'-' is not a file"},
      {{"replay", "-o", "-"}, "'-' is not a file"},
      {{"replay", "--mpi", "--trace", "-"}, "'-' is not a file"},
      {{"run", "--trace", "/dev/null"}, "device, fifo or socket"},
      {{"run", "--csv", fifo}, "device, fifo or socket"},
      {{"sweep", "-o", fifo}, "device, fifo or socket"},
      {{"run", "--trace", link}, "symbolic link"},
      {{"sweep", "--json", link}, "symbolic link"},
      {{"run", "--trace", dir + "/folder"}, "is a folder"},
      {{"run", "--trace", dir + "/" + std::string(300, 'n') + ".json"}, "longer than"},
  });
  CHECK_FALSE(exists("-"));
  CHECK_FALSE(exists(dir + "/target.json"));
  struct stat st {};
  REQUIRE(::stat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  REQUIRE(::stat("/dev/null", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
}

TEST_CASE("outputs: a name as long as the file system allows is written, no temp file left") {
  count_cases();
  const std::string dir = fresh_dir(), name = std::string(250, 't') + ".json";
  const auto r = run_specsim({"run", "--trace", dir + "/" + name});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(listing(dir) == std::vector<std::string>{name});
  CHECK(run_specsim({"sweep", "--batch-size", "1,2", "-o", dir + "/s.csv", "--json", dir + "/s.json"}).exit_code == 0);
  CHECK(listing(dir) == std::vector<std::string>{"s.csv", "s.json", name});
}

namespace {

// A folder holding a `gnuplot` that runs `body` (sh), for PATH.
std::string stub_gnuplot(const std::string& dir, const std::string& body) {
  const std::string bin = dir + "/bin";
  ::mkdir(bin.c_str(), 0755);
  write_text(bin + "/gnuplot", "#!/bin/sh\n" + body + "\n");
  ::chmod((bin + "/gnuplot").c_str(), 0755);
  return bin;
}

// The process id a stub wrote to `file` (a full line), 0 until it has.
pid_t pid_in(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  if (!std::getline(in, line) || in.eof() || line.empty()) return 0;
  return static_cast<pid_t>(std::stol(line));
}

// A process id that is not running (a child that has exited and been reaped).
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

}  // namespace

TEST_CASE("outputs: SIGTERM or SIGINT during a plot removes the temporary files") {
  for (const int sig : {SIGTERM, SIGINT}) {
    INFO("signal " << sig);
    count_cases();
    const std::string dir = fresh_dir(), tmp = dir + "/tmp", out = dir + "/out";
    // A gnuplot that never finishes while specsim runs and, once specsim is gone, writes its image
    // (the temporary name its script gives) and leaves, as a real one would finish its plot.
    const std::string bin = stub_gnuplot(dir, "echo $$ > " + dir +
                                                  "/gnuplot.pid\n"
                                                  "img=$(sed -n \"s/^set output '\\(.*\\)'$/\\1/p\" \"$1\")\n"
                                                  "while kill -0 $PPID 2>/dev/null; do sleep 0.05; done\n"
                                                  ": > \"$img\"");
    ::mkdir(tmp.c_str(), 0755), ::mkdir(out.c_str(), 0755);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("PATH", (bin + ":/usr/bin:/bin").c_str(), 1);
      ::setenv("TMPDIR", tmp.c_str(), 1);
      ::signal(sig, SIG_DFL);  // a shell's background job starts with SIGINT ignored
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1), ::dup2(null, 2);
      ::execl(specsim_bin().c_str(), "specsim", "sweep", "--batch-size", "1,2", "--plot", (out + "/p.png").c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // Wait for gnuplot to start, then end specsim. Up to 30 s: a sanitizer build on a loaded
    // machine can take seconds to reach the plot.
    pid_t gnuplot = 0;
    for (int i = 0; i < 600 && (gnuplot = pid_in(dir + "/gnuplot.pid")) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(gnuplot > 0);
    CHECK_FALSE(listing(tmp).empty());
    ::kill(pid, sig);
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == sig);
    // specsim killed its gnuplot before removing the files: it never wrote its image. Give an
    // orphaned one time to write it, were it still running.
    for (int i = 0; i < 100 && ::kill(gnuplot, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(listing(tmp).empty());
    CHECK(listing(out).empty());
  }
}

TEST_CASE("outputs: gnuplot keeps an ignored SIGHUP (nohup) and a stderr when specsim was started without one") {
  for (const std::string mode : {"nohup", "no stderr"}) {
    INFO(mode);
    count_cases();
    const std::string dir = fresh_dir(), out = dir + "/p.png";
    // A gnuplot that draws only when its stderr is open and SIGHUP is ignored (bit 0 of SigIgn).
    const std::string bin = stub_gnuplot(dir,
                                         "img=$(sed -n \"s/^set output '\\(.*\\)'$/\\1/p\" \"$1\")\n"
                                         "[ -e /proc/$$/fd/2 ] || exit 3\n"
                                         "grep -q '^SigIgn:.*[13579bdfBDF]$' /proc/$$/status || exit 4\n"
                                         "printf x > \"$img\"");
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("PATH", (bin + ":/usr/bin:/bin").c_str(), 1);
      ::signal(SIGHUP, SIG_IGN);  // both modes: the stub checks it
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      if (mode == "no stderr")
        ::close(2);
      else
        ::dup2(null, 2);
      ::execl(specsim_bin().c_str(), "specsim", "sweep", "--batch-size", "1,2", "--plot", out.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(exists(out));
  }
}

TEST_CASE("outputs: temporary files are named after their output and fit in NAME_MAX") {
  const std::string dir = fresh_dir();
  for (const std::string name : {std::string("report.json"), std::string(255, 'n'), std::string(250, 'p') + ".png"}) {
    count_cases();
    const std::string tmp = specsim::temp_name_beside(dir + "/" + name);
    const std::string base = tmp.substr(dir.size() + 1);
    INFO(base);
    CHECK(tmp.rfind(dir + "/", 0) == 0);
    CHECK(base.size() <= NAME_MAX);
    CHECK(base.rfind("." + name.substr(0, 20), 0) == 0);
    CHECK(base.find(".specsim-tmp." + std::to_string(::getpid()) + "-") != std::string::npos);
  }
}

TEST_CASE("outputs: leftovers of a killed specsim are removed by the next write of the same file") {
  const std::string dir = fresh_dir();
  count_cases();
  const std::string prefix = ".t.json.specsim-tmp.";
  const std::string stale = prefix + std::to_string(dead_pid()) + "-0";  // SIGKILL-ed: nothing removed it
  const std::string fresh = prefix + std::to_string(dead_pid()) + "-1";  // too recent to judge
  const std::string alive = prefix + std::to_string(::getpid()) + "-7";  // a writer still running
  const std::string other = ".u.json.specsim-tmp." + std::to_string(dead_pid()) + "-0";  // another output's
  for (const auto& n : {stale, fresh, alive, other}) write_text(dir + "/" + n, "partial");
  const timespec old[2] = {{0, UTIME_OMIT}, {std::time(nullptr) - 3600, 0}};
  for (const auto& n : {stale, alive, other}) REQUIRE(::utimensat(AT_FDCWD, (dir + "/" + n).c_str(), old, 0) == 0);
  const auto r = run_specsim({"run", "--trace", dir + "/t.json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> want{fresh, alive, other, "t.json"};
  std::sort(want.begin(), want.end());
  CHECK(listing(dir) == want);
}

TEST_CASE("outputs: a missing temporary folder is refused before the sweep runs (exit 3); an empty TMPDIR is /tmp") {
  const std::string dir = fresh_dir(), png = dir + "/p.png";
  // A gnuplot that draws: writes something to the script's `set output` file.
  const std::string bin =
      stub_gnuplot(dir, "out=$(sed -n \"s/^set output '\\(.*\\)'$/\\1/p\" \"$1\"); echo png > \"$out\"");
  const std::string path = "PATH=" + bin + ":/usr/bin:/bin";
  auto sweep = [&](const std::string& tmpdir) {
    return run_program("/usr/bin/env",
                       {path, "TMPDIR=" + tmpdir, specsim_bin(), "sweep", "--batch-size", "1,2", "--plot", png});
  };
  for (const std::string missing : {dir + "/no-such-folder", dir + "/p.png.d/x"}) {
    count_cases();
    const auto r = sweep(missing);
    INFO(r.err);
    CHECK(r.exit_code == 3);
    CHECK(r.err.rfind("error: the temporary folder", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // the sweep did not run: no summary line
    CHECK(r.err.find("TMPDIR") != std::string::npos);
    CHECK_FALSE(exists(png));
  }
  count_cases();
  const auto r = sweep("");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(slurp(png) == "png\n");
}
