// Resources: every reader stops at a size cap and refuses devices (no /dev/zero read until memory
// runs out, no hang on a fifo nobody writes), and a sweep too large for memory is refused first.
#include <sys/stat.h>
#include <unistd.h>

#include "hostile_cases.h"
#include "sweep/sweep_memory.h"

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
