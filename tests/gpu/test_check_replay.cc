// `specsim check --replay` on a GPU: a replay baseline made here passes its own check
// (exit 0, every custom all-reduce verified), the same check run by the test-only
// specsim-skip-allreduce (its verification launches nothing) fails with exit 1 naming the wrong
// elements, and a baseline doctored to twice as fast fails with exit 1 and REGRESSED.
// Plain executable: prints what each run printed; `SKIP:` and exit 77 without a GPU.
#include <cuda_runtime_api.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

const std::string kFlags =
    " --model-path llama-3.1-8b --tp-size 8 --accept-len 3 --allreduce custom --allreduce nccl"
    " --iters 5 --warmup 2";

struct Run {
  int rc = -1;
  std::string out;
};

Run sh(const std::string& dir, const std::string& args, const char* bin = SPECSIM_BIN, const std::string& env = "") {
  const std::string log = dir + "/out.txt";
  const std::string cmd = env + " '" + std::string(bin) + "' " + args + " > '" + log + "' 2>&1";
  std::cout << "$ " << cmd << "\n";
  const int st = std::system(cmd.c_str());
  Run r;
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream f(log);
  std::stringstream ss;
  ss << f.rdbuf();
  r.out = ss.str();
  std::cout << r.out << "(exit " << r.rc << ")\n\n";
  return r;
}

int failures = 0;
void expect(bool ok, const std::string& what) {
  std::cout << (ok ? "PASS: " : "FAIL: ") << what << "\n";
  failures += !ok;
}
bool has(const Run& r, const std::string& s) { return r.out.find(s) != std::string::npos; }

}  // namespace

int main() {
  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 1) {
    std::cout << "SKIP: no CUDA GPU\n";
    return 77;
  }
  char tmpl[] = "/tmp/gpu_check_replay.XXXXXX";
  if (!mkdtemp(tmpl)) return 1;
  const std::string dir = tmpl, base = dir + "/base.json";

  const Run made = sh(dir, "replay" + kFlags + " -o " + base);
  expect(made.rc == 0, "specsim replay -o makes the baseline");
  if (made.rc != 0) return 1;

  const std::string check = "check --replay --baseline " + base + kFlags;
  // The shipped specsim has no fault switch: the variable older builds read changes nothing.
  const Run ok = sh(dir, check + " --tolerance 50%", SPECSIM_BIN, "SPECSIM_CAR_FAULT=skip");
  expect(ok.rc == 0, "check --replay passes on its own baseline (SPECSIM_CAR_FAULT ignored)");
  expect(has(ok, "allreduce verify: custom:") && has(ok, ": ok ("), "custom all-reduces verified");
  expect(!has(ok, "WRONG"), "no wrong element");
  if (gpus < 8) expect(has(ok, "nccl: not verified: needs 8 GPUs"), "nccl without 8 GPUs is said, not silent");

  const Run fault = sh(dir, check + " --tolerance 50%", SPECSIM_SKIP_ALLREDUCE_BIN);
  expect(fault.rc == 1, "a kernel that launches nothing fails the check (exit 1)");
  expect(has(fault, "WRONG: ") && has(fault, "elements differ from the CPU reference"), "the wrong elements are named");
  expect(has(fault, "check: FAILED"), "the check says FAILED");

  nlohmann::json j = nlohmann::json::parse(std::ifstream(base));
  for (auto& p : j["phases"]) p["measured"]["us"] = p["measured"]["us"].get<double>() * 0.5;
  const std::string fast = dir + "/fast.json";
  std::ofstream(fast) << j.dump(2);
  const Run reg = sh(dir, "check --replay --baseline " + fast + kFlags + " --tolerance 20%");
  expect(reg.rc == 1 && has(reg, "REGRESSED"), "a baseline twice as fast: REGRESSED, exit 1");

  std::cout << (failures ? "FAILED: " : "OK: ") << failures << " failures\n";
  return failures ? 1 : 0;
}
