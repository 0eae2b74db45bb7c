// Resources, memory: a sweep or tune grid past the memory this process may use is refused before
// it allocates, naming the flag to cut and the most values it may keep; and an allocation that
// still fails (an input that expands in memory) is one `error: out of memory` line, exit 3, not a
// terminate. The memory is bounded with `ulimit -v`, which the estimates read, so the cases hold
// on any machine. AddressSanitizer reserves terabytes of address space and cannot run under
// `ulimit -v`: those cases are left to the plain build.
#include <fstream>
#include <regex>

#include "hostile_cases.h"

using namespace specsim::test;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kMemAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kMemAsan = true;
#else
constexpr bool kMemAsan = false;
#endif
#else
constexpr bool kMemAsan = false;
#endif

// specsim with `args` under `ulimit -v kib` (bash runs it; nothing else goes through the shell).
CliResult run_limited(long kib, const std::vector<std::string>& args) {
  std::vector<std::string> a = {"-c", "ulimit -v " + std::to_string(kib) + " && exec \"$0\" \"$@\"", specsim_bin()};
  a.insert(a.end(), args.begin(), args.end());
  return run_program("/bin/bash", a);
}

// The contract of a refusal: exit 2, one `error:` line naming `flag` as its where.
void check_refused(const CliResult& r, const std::string& flag) {
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("error: ", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find("(" + flag + ")\n") != std::string::npos);
  CHECK(r.out.empty());
}

// The N of "give FLAG at most N values" in an error line (-1 when absent).
long long most_values(const std::string& err, const std::string& flag) {
  std::smatch m;
  const std::regex re("give " + flag + " at most ([0-9]+)");
  return std::regex_search(err, m, re) ? std::stoll(m[1]) : -1;
}

// The address space specsim needs to start, in KiB (a few hundred MiB where the CUDA runtime is
// linked): the smallest limit, in 16 MiB steps, under which `--version` runs.
long start_kib() {
  static const long kib = [] {
    for (long k = 16 << 10; k <= 16L << 20; k += 16 << 10)
      if (run_limited(k, {"--version"}).exit_code == 0) return k;
    return -1L;
  }();
  return kib;
}

// Room for a run to plan in: ~2 GiB beyond the start, so a sweep or tune may plan ~1 GiB.
long limit_kib() { return start_kib() + (2L << 20); }

}  // namespace

TEST_CASE("resources: a grid above the point cap names its longest list and the most values it may keep") {
  // 100000 batch sizes x 200 context lengths x 2 backends = 40M points, above the 10M cap.
  const CliResult r = run_specsim({"sweep", "--batch-size", "1..100000", "--context-len", "1..200"});
  count_cases();
  check_refused(r, "--batch-size");
  CHECK(r.err.find("40000000 points") != std::string::npos);
  CHECK(most_values(r.err, "--batch-size") == 25000);  // 25000 x 200 x 2 = the 10M cap
}

TEST_CASE("resources: a sweep past the memory this process may use is refused before it runs") {
  if (kMemAsan) {
    WARN("SKIP: ulimit -v cannot bound an AddressSanitizer build");
    return;
  }
  const std::string dir = fresh_dir(), csv = dir + "/s.csv", json = dir + "/s.json";
  // 1000 x 2000 x 2 backends = 4M points: ~4 GB of results and CSV text, past ~1.4 GiB.
  CliResult r = run_limited(limit_kib(), {"sweep", "--batch-size", "1..1000", "--context-len", "1..2000", "-o", csv});
  count_cases();
  check_refused(r, "--context-len");
  CHECK(r.err.find("GiB of memory") != std::string::npos);
  const long long keep = most_values(r.err, "--context-len");
  CHECK(keep >= 1);
  CHECK(keep < 2000);
  CHECK_FALSE(exists(csv));
  // With JSON as well each point holds more, so fewer values fit.
  r = run_limited(limit_kib(),
                  {"sweep", "--batch-size", "1..1000", "--context-len", "1..2000", "-o", csv, "--json", json});
  count_cases();
  check_refused(r, "--context-len");
  CHECK(most_values(r.err, "--context-len") < keep);
  CHECK_FALSE(exists(csv));
  CHECK_FALSE(exists(json));
  // A sweep that fits runs under the same limit.
  r = run_limited(limit_kib(), {"sweep", "--batch-size", "1,2", "--context-len", "1024,2048", "-o", csv});
  count_cases();
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(exists(csv));
}

TEST_CASE("resources: a tune grid past the memory this process may use is refused before it ranks") {
  if (kMemAsan) {
    WARN("SKIP: ulimit -v cannot bound an AddressSanitizer build");
    return;
  }
  const std::vector<std::string> wide = {
      "tune", "--model-path", "llama-3.1-8b", "--tp-size",  "8",  "--hardware",         "h200:nvswitch", "--accept-len",
      "3",    "--max-steps",  "16",           "--max-topk", "16", "--max-draft-tokens", "256",           "--batch-size",
      "1..64"};
  // Every ranked row shown (--top 0): ~37,000 rows a batch size x 64 batch sizes.
  std::vector<std::string> all = wide;
  all.insert(all.end(), {"--top", "0", "--json"});
  CliResult r = run_limited(limit_kib(), all);
  count_cases();
  check_refused(r, "--top");
  std::smatch m;
  REQUIRE(std::regex_search(r.err, m, std::regex("give --top at most ([0-9]+)")));
  const std::string top = m[1];
  // The --top it names fits under the same limit (the check runs before any ranking; a smaller
  // batch list keeps the run short).
  std::vector<std::string> fits = {"tune",
                                   "--model-path",
                                   "llama-3.1-8b",
                                   "--tp-size",
                                   "8",
                                   "--hardware",
                                   "h200:nvswitch",
                                   "--accept-len",
                                   "3",
                                   "--batch-size",
                                   "1",
                                   "--top",
                                   top};
  r = run_limited(limit_kib(), fits);
  count_cases();
  INFO(r.err);
  CHECK(r.exit_code == 0);
}

TEST_CASE("resources: a JSON input that would expand past memory is refused before it is parsed") {
  if (kMemAsan) {
    WARN("SKIP: ulimit -v cannot bound an AddressSanitizer build");
    return;
  }
  REQUIRE(start_kib() > 0);
  // 48 MB of empty JSON objects (under the 256 MiB input cap): 16M values, ~1.7 GB once parsed,
  // past what 512 MiB beyond the start allows. The parser is never entered.
  const std::string dir = fresh_dir(), big = dir + "/big.json";
  {
    std::ofstream out(big);
    out << "{\"traceEvents\": [{}";
    std::string chunk;
    for (int i = 0; i < 4096; ++i) chunk += ",{}";
    for (int i = 0; i < 4000; ++i) out << chunk;
    out << "]}";
  }
  const CliResult r = run_limited(start_kib() + (512 << 10), {"ingest", "--torch-trace", big});
  count_cases();
  check_refused(r, big);
  CHECK(r.err.find("16384003 JSON values") != std::string::npos);
}

TEST_CASE("resources: an allocation that still fails is one out-of-memory line, exit 3") {
  if (kMemAsan) {
    WARN("SKIP: ulimit -v cannot bound an AddressSanitizer build");
    return;
  }
  REQUIRE(start_kib() > 0);
  // A 240 MB log (under the 256 MiB input cap) read with 128 MiB to spare: its buffer cannot be
  // had. Nothing estimates a plain read, so the allocation fails, and the boundary says so.
  const std::string dir = fresh_dir(), big = dir + "/big.log";
  {
    std::ofstream out(big);
    const std::string line(1023, 'x');
    for (int i = 0; i < 240 * 1024; ++i) out << line << '\n';
  }
  const CliResult r = run_limited(start_kib() + (128 << 10), {"ingest", "--sglang-log", big});
  count_cases();
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.err.rfind("error: out of memory", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.out.empty());
}
