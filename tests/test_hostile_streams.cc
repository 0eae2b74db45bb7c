// Streams and values of every flag: a failed write to stdout is an environment failure (exit 3),
// an empty value is refused, an integer with leading zeros is decimal in every command, and a
// gzip-compressed input (a torch profiler's default .json.gz) reads as its content, bounded.
#include <nlohmann/json.hpp>

#include "hostile_cases.h"

using namespace specsim::test;

TEST_CASE("streams: a failed write to stdout exits 3 with one error line") {
  if (!exists("/dev/full")) {
    WARN("SKIP: no /dev/full on this machine");
    return;
  }
  for (const std::string args : {"--json", "", "ingest --nccl-tests \"$1\"", "--version"}) {
    count_cases();
    const CliResult r = run_program("/bin/sh", {"-c", "\"$0\" " + args + " > /dev/full", specsim_bin(),
                                                traces_path("nccl-tests-a100sxm4x8-nvlink.txt")});
    INFO(args << ": " << r.err);
    CHECK(r.exit_code == 3);
    CHECK(r.err.rfind("error: cannot write to stdout", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("streams: empty values are refused on every command, naming the flag") {
  const std::string dir = fresh_dir();
  expect_bad_input({
      {{"--batch-size", ""}, "--batch-size"},
      {{"--trace", "", "--cycles", "3"}, "--trace"},
      {{"--model-path", ""}, "--model-path"},
      {{"--scenario", ""}, "--scenario"},
      {{"sweep", "--batch-size", ""}, "--batch-size"},
      {{"tune", "--csv", ""}, "--csv"},
      {{"ingest", "--torch-trace", ""}, "--torch-trace"},
      {{"calibrate", "--nccl-tests", "", "--hardware", "h200:nvswitch", "-o", dir + "/x.json"}, "--nccl-tests"},
  });
}

TEST_CASE("streams: an integer with leading zeros is decimal in run as in sweep") {
  count_cases(2);
  const CliResult run = run_specsim({"--model-path", "llama-3.1-8b", "--hardware", "h200:nvswitch", "--accept-len", "2",
                                     "--batch-size", "010", "--json"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(nlohmann::json::parse(run.out)["settings"]["batch_size"] == 10);
  const CliResult sweep = run_specsim({"sweep", "--model-path", "llama-3.1-8b", "--hardware", "h200:nvswitch",
                                       "--accept-len", "2", "--batch-size", "010", "-o", "-"});
  INFO(sweep.err);
  REQUIRE(sweep.exit_code == 0);
  CHECK(sweep.out.find("\n1,bf16,10,") != std::string::npos);  // tp_size, dtype, batch_size
}

TEST_CASE("streams: a gzipped torch trace reads as the trace; a bomb or a truncated one is refused") {
  const std::string dir = fresh_dir(), plain = traces_path("torch-trace-verify-synthetic.json");
  const std::string gz = dir + "/trace.json.gz";
  REQUIRE(run_program("/bin/sh", {"-c", "gzip -c \"$0\" > \"$1\"", plain, gz}).exit_code == 0);
  count_cases();
  const CliResult a = run_specsim({"ingest", "--torch-trace", plain}), b = run_specsim({"ingest", "--torch-trace", gz});
  INFO(b.err);
  REQUIRE(a.exit_code == 0);
  CHECK(b.exit_code == 0);
  // The same table; the first and last lines name the file.
  auto table = [](const std::string& out) {
    return out.substr(out.find('\n'), out.find("mean NCCL") - out.find('\n'));
  };
  CHECK(table(b.out) == table(a.out));
  // 300 MiB of zeros in a few hundred KiB; and the gzip cut in half.
  REQUIRE(run_program("/bin/sh", {"-c", "head -c 314572800 /dev/zero | gzip -1 > \"$0\"", dir + "/bomb.json.gz"})
              .exit_code == 0);
  const std::string whole = slurp(gz);
  write_text(dir + "/cut.json.gz", whole.substr(0, whole.size() / 2));
  expect_bad_input({
      {{"ingest", "--torch-trace", dir + "/bomb.json.gz"}, "inflates to more than 256 MiB"},
      {{"ingest", "--torch-trace", dir + "/cut.json.gz"}, "truncated gzip"},
      {{"--model-path", dir + "/bomb.json.gz"}, "inflates"},
  });
}
