// Resources: every reader stops at a size cap and refuses devices (no /dev/zero read until memory
// runs out, no hang on a fifo nobody writes), and a sweep too large for memory is refused first.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "hostile_cases.h"
#include "sweep/sweep_memory.h"
#include "util/bounded_read.h"
#include "util/error.h"

using namespace specsim::test;

namespace {

// Every flag that reads a file, with the arguments that make the command otherwise valid.
std::vector<BadCase> every_reader(const std::string& file, const std::string& mentions, const std::string& out) {
  return {
      {{"--model-path", file}, mentions == "not a file" ? "(--model-path)" : mentions},  // only regular files
      {{"--hardware", file}, mentions == "not a file" ? "(--hardware)" : mentions},
      {{"check", "--baseline", file}, mentions},
      {{"calibrate", "--nccl-tests", file, "--hardware", "h200:nvswitch", "-o", out}, mentions},
      {{"calibrate", "--from", file, "--hardware", "h200:nvswitch", "-o", out}, mentions},
      {{"ingest", "--torch-trace", file}, mentions},
      {{"ingest", "--sglang-log", file}, mentions},
      {{"ingest", "--nccl-tests", file}, mentions},
      {{"ingest", "--replay-report", file}, mentions},
      {{"run", "--accept-from", file}, mentions},
      {{"run", "--baseline-from", file}, mentions},
      {{"run", "--anchor-trace", file}, mentions},
  };
}

}  // namespace

TEST_CASE("resources: a device is refused by every reader") {
  const std::string out = fresh_dir() + "/out.json";
  expect_bad_input(every_reader("/dev/zero", "not a file", out));
  CHECK_FALSE(exists(out));
}

TEST_CASE("resources: a file above 256 MiB is refused before it is read") {
  const std::string dir = fresh_dir(), big = dir + "/big.json", out = dir + "/out.json";
  write_text(big, "{}");
  REQUIRE(::truncate(big.c_str(), (off_t(300) << 20)) == 0);  // sparse: no disk used
  expect_bad_input(every_reader(big, "larger than 256 MiB", out));
  CHECK_FALSE(exists(out));
}

TEST_CASE("resources: YAML scenario files and validate's nccl-tests logs are bounded too") {
  const std::string dir = fresh_dir(), big = dir + "/big.yaml", zero = dir + "/zero.yaml";
  write_text(big, "tp-size: 8\n");
  REQUIRE(::truncate(big.c_str(), (off_t(300) << 20)) == 0);  // sparse: no disk used
  REQUIRE(::symlink("/dev/zero", zero.c_str()) == 0);
  const std::string logs = dir + "/logs";
  ::mkdir(logs.c_str(), 0755);
  write_text(logs + "/index.json", R"({"logs": [{"file": "zero.txt", "hardware": "a100-sxm:nvswitch", "gpus": 8}]})");
  REQUIRE(::symlink("/dev/zero", (logs + "/zero.txt").c_str()) == 0);
  expect_bad_input({{{"run", "--scenario", big}, "larger than 256 MiB"},
                    {{"run", "--scenario", zero}, "not a file"},
                    {{"validate", "--nccl", "--nccl-logs", logs}, "not a file"}});
}

TEST_CASE("resources: a fifo nobody writes reads as empty, no hang") {
  const std::string dir = fresh_dir(), fifo = dir + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  expect_bad_input({{{"ingest", "--sglang-log", fifo}, "empty file"},
                    {{"ingest", "--nccl-tests", fifo}, "empty file"},
                    {{"ingest", "--torch-trace", fifo}, "empty file"},
                    {{"ingest", "--replay-report", fifo}, "malformed JSON"}});
}

TEST_CASE("resources: a sweep that would not fit in memory is refused before it runs") {
  using namespace specsim::sweep;
  // 9,990,000 points (under the point cap) with JSON output.
  const std::size_t points = 9'990'000;
  CHECK(sweep_memory_bytes(points, true, true) > sweep_memory_bytes(points, true, false));
  CHECK(sweep_memory_bytes(2 * points, false, false) == 2 * sweep_memory_bytes(points, false, false));
  if (sweep_memory_bytes(points, false, true) <= sweep_memory_limit_bytes()) {
    WARN("skipped the refusal run: this machine has memory for a 10M-point JSON sweep");
    return;
  }
  const std::string json = fresh_dir() + "/s.json";
  expect_bad_input({{{"sweep", "--batch-size", "1..1000", "--context-len", "1..4995", "--json", json}, "memory"}});
  CHECK_FALSE(exists(json));
}

namespace {

// A fifo held open for writing by this process (O_RDWR never blocks), as a writer that never
// closes it would: closed when this goes out of scope.
struct OpenFifo {
  std::string path;
  int fd = -1;
  explicit OpenFifo(const std::string& p) : path(p) {
    REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
    fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
  }
  ~OpenFifo() {
    if (fd >= 0) ::close(fd);
  }
  void send(const std::string& s) const { CHECK(::write(fd, s.data(), s.size()) == ssize_t(s.size())); }
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const specsim::InputError& e) {
    return e.line();
  }
  return "";
}

}  // namespace

TEST_CASE("resources: a pipe whose writer stays silent or never closes ends in an error, not a hang") {
  using specsim::read_bounded;
  const std::string dir = fresh_dir();
  const specsim::PipeTimeouts quick{600, 150};
  count_cases(3);  // a silent writer, an endless one, one that pauses and closes
  {                // silent writer: the idle limit
    const OpenFifo f(dir + "/silent");
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(error_of([&] {
            read_bounded(f.path, "--x", specsim::kMaxInputBytes, quick);
          }).find("sent nothing for 150 ms") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  }
  {  // a writer that keeps sending and never closes (tail -f): the total limit
    const OpenFifo f(dir + "/endless");
    std::atomic<bool> stop{false};
    std::thread writer([&] {
      while (!stop) f.send("line\n"), std::this_thread::sleep_for(std::chrono::milliseconds(40));
    });
    // An idle limit 12x the writer's 40 ms cadence, so a writer held up by a loaded machine
    // (sanitizer builds, two cores) does not look silent.
    const std::string err = error_of([&] { read_bounded(f.path, "--x", specsim::kMaxInputBytes, {1500, 500}); });
    stop = true;
    writer.join();
    CHECK(err.find("still open after 1500 ms") != std::string::npos);
    CHECK(err.find("(--x)") != std::string::npos);
  }
  {  // a writer that pauses under the idle limit, sends, and closes: read whole
    OpenFifo f(dir + "/closes");
    std::thread writer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the reader is waiting by now
      f.send("a\n");
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      f.send("b\n");
      ::close(f.fd), f.fd = -1;
    });
    std::string text;
    CHECK_NOTHROW(text = read_bounded(f.path, "--x", specsim::kMaxInputBytes, {5000, 1000}));
    writer.join();
    CHECK(text == "a\nb\n");
  }
}

TEST_CASE("resources: the command line gives up on a silent pipe after 10 s with one error line") {
  const OpenFifo f(fresh_dir() + "/fifo");
  f.send("[2025-06-01 10:00:00 TP0] Decode batch, #running-req: 1\n");  // a start, then silence
  const auto t0 = std::chrono::steady_clock::now();
  expect_bad_input({{{"ingest", "--sglang-log", f.path}, "sent nothing for 10 s"}});
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));
}
