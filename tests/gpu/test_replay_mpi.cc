// `mpirun -np 2 specsim replay --mpi` (one process per rank), end to end. Each rank's
// stdout and stderr go to their own files, so "rank 1 prints nothing" is checked, not assumed.
//  - bad input (world size 2, --tp-size 4): every rank exits 2, rank 0 alone says why, nothing
//    written; runs without a GPU too.
//  - 2 ranks on ONE GPU (CUDA_VISIBLE_DEVICES=0), --allreduce custom: the report says gpus 2, has
//    every phase, all-reduces measured > 0, the all-gathers left out (collectives_skipped, notes);
//    the same with --allreduce nccl is refused (exit 2): NCCL needs one GPU per rank.
//  - the same with --allreduce custom:fused: the report names that backend, the layer boundaries'
//    all-reduces ran as the fused kernel, and each took its separate norm with it.
//  - with 2 GPUs or more, 2 ranks on 2 GPUs with NCCL: all-gathers measured, none skipped.
// Plain executable: prints what each run printed; `SKIP:` and exit 77 without mpirun or a GPU.
#include <cuda_runtime_api.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

const std::string kFlags =
    " --model-path llama-3.1-8b --hardware h200:nvswitch --accept-len 3 --iters 3 --warmup 1 --op-passes 1"
    " --no-gemm-chain";

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Run {
  int rc = -1;
  std::string out[2], err[2], dir;
};

#ifdef SPECSIM_MPIEXEC
/// mpirun -np `np` specsim `args` ({DIR} replaced by this run's folder), every rank with `env`
/// set and its output in DIR/out.R and DIR/err.R.
Run mpirun(const std::string& dir, int np, const std::string& env, std::string args) {
  static int n = 0;
  Run r;
  r.dir = dir + "/run" + std::to_string(n++);
  std::filesystem::create_directories(r.dir);
  for (auto p = args.find("{DIR}"); p != std::string::npos; p = args.find("{DIR}")) args.replace(p, 5, r.dir);
  const std::string rank = "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-$PMIX_RANK}}";
  const std::string cmd = std::string(SPECSIM_MPIEXEC) + " " + std::to_string(np) + " sh -c 'exec env " + env +
                          " \"$0\" \"$@\" > \"" + r.dir + "/out." + rank + "\" 2> \"" + r.dir + "/err." + rank +
                          "\"' '" SPECSIM_BIN "' " + args + " > '" + r.dir + "/mpirun.txt' 2>&1";
  std::cout << "$ " << cmd << "\n";
  const int st = std::system(cmd.c_str());
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  for (int k = 0; k < 2; ++k) {
    r.out[k] = slurp(r.dir + "/out." + std::to_string(k));
    r.err[k] = slurp(r.dir + "/err." + std::to_string(k));
    std::cout << "rank " << k << " stdout:\n" << r.out[k] << "rank " << k << " stderr:\n" << r.err[k];
  }
  std::cout << "mpirun:\n" << slurp(r.dir + "/mpirun.txt") << "(exit " << r.rc << ")\n\n";
  return r;
}
#endif

int failures = 0;
void expect(bool ok, const std::string& what) {
  std::cout << (ok ? "PASS: " : "FAIL: ") << what << "\n";
  failures += !ok;
}
bool has(const std::string& text, const std::string& s) { return text.find(s) != std::string::npos; }
/// Lines of `text` that start with `prefix`.
int lines_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.rfind(prefix, 0) == 0;
  return n;
}
/// specsim's own lines on stderr (launcher warnings, e.g. Open MPI's transports, are not its).
int specsim_lines(const std::string& err) {
  return lines_starting(err, "error:") + lines_starting(err, "internal error:") + lines_starting(err, "note:");
}
/// Rank 1 said nothing (the report goes to stdout, errors to stderr).
bool rank1_silent(const Run& r) { return r.out[1].empty() && specsim_lines(r.err[1]) == 0; }

nlohmann::json report(const Run& r) {
  try {
    return nlohmann::json::parse(slurp(r.dir + "/r.json"));
  } catch (const std::exception& e) {
    expect(false, std::string("the -o report parses: ") + e.what());
    return nlohmann::json::object();
  }
}

bool note_has(const nlohmann::json& j, const std::string& s) {
  for (const auto& n : j.value("notes", nlohmann::json::array()))
    if (n.is_string() && has(n.get<std::string>(), s)) return true;
  return false;
}

}  // namespace

int main() {
#ifndef SPECSIM_MPIEXEC
  std::cout << "SKIP: CMake found no MPI or no mpiexec: the --mpi replay is not built or cannot be started\n";
  return 77;
#else
  char tmpl[] = "/tmp/gpu_replay_mpi.XXXXXX";
  if (!mkdtemp(tmpl)) return 1;
  const std::string dir = tmpl;

  // Bad input, agreed by every rank before any GPU work: world size 2 but --tp-size 4.
  const Run bad = mpirun(dir, 2, "", "replay --mpi --tp-size 4" + kFlags + " -o {DIR}/r.json");
  expect(bad.rc == 2, "world size != --tp-size: exit 2");
  expect(lines_starting(bad.err[0], "error: mpirun started 2 processes; --mpi runs one rank per process, so start 4") ==
                 1 &&
             specsim_lines(bad.err[0]) == 1,
         "rank 0 says why, in one line");
  expect(rank1_silent(bad) && bad.out[0].empty(), "rank 1 printed nothing, no report");
  expect(slurp(bad.dir + "/r.json").empty(), "nothing written");

  int gpus = 0;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 1) {
    std::cout << "SKIP: no CUDA GPU (the bad-input check above ran: " << failures << " failure(s))\n";
    return failures ? 1 : 77;
  }

  // Two ranks on one GPU: the custom all-reduce through CUDA IPC, the all-gathers left out.
  const std::string one_gpu = "CUDA_VISIBLE_DEVICES=0";
  const Run shared =
      mpirun(dir, 2, one_gpu, "replay --mpi --tp-size 2 --allreduce custom" + kFlags + " -o {DIR}/r.json");
  expect(shared.rc == 0, "2 ranks on one GPU, --allreduce custom: exit 0");
  expect(has(shared.out[0], "specsim replay on ") && has(shared.out[0], "2 processes under MPI"),
         "rank 0 printed the report");
  expect(rank1_silent(shared), "rank 1 printed nothing");
  const nlohmann::json j = report(shared);
  expect(j.value("gpus", 0) == 2, "report: gpus 2");
  expect(j.value("collectives", "") == "measured", "report: collectives measured");
  expect(j.value("shared_gpus", false), "report: shared_gpus true");
  expect(has(j.value("collectives_detail", ""), "all-gathers left out"), "report: all-gathers left out (detail)");
  expect(note_has(j, "2 processes under MPI"), "note: 2 processes under MPI");
  expect(note_has(j, "functional check, not a performance measurement"),
         "note: shared-GPU timings are a functional check");
  const auto phases = j.value("phases", nlohmann::json::array());
  expect(phases.size() == 4, "report: 4 phases (draft decode, verify, draft extend, baseline)");
  for (const auto& p : phases) {
    const std::string ph = p.value("phase", "?");
    const auto& me = p.at("measured");
    expect(me.value("us", 0.0) > 0, ph + ": phase measured");
    expect(me["allreduce_us"].is_number() && me["allreduce_us"].get<double>() > 0, ph + ": all-reduces measured > 0");
    expect(p.value("collectives_skipped", 0) >= 1, ph + ": the all-gather counted in collectives_skipped");
    expect(me["allgather_us"].is_null(), ph + ": no all-gather time measured");
    expect(p.at("predicted").value("allgather_us", -1.0) == 0.0, ph + ": predicted without the all-gather");
  }

  // --allreduce custom:fused: each layer boundary runs the fused all-reduce + add + RMSNorm and
  // its separate norm does not run, as the engine prices it (the predicted side is the same backend).
  const Run fused =
      mpirun(dir, 2, one_gpu, "replay --mpi --tp-size 2 --allreduce custom:fused" + kFlags + " -o {DIR}/r.json");
  expect(fused.rc == 0, "2 ranks on one GPU, --allreduce custom:fused: exit 0");
  const nlohmann::json f = report(fused);
  expect(f.value("allreduce_backend", "") == "custom:fused", "report: allreduce_backend custom:fused");
  // ops of a phase by kind (repeats counted), and the fused all-reduces by their note
  auto count_ops = [](const nlohmann::json& phase, const std::string& kind, const std::string& note) {
    int n = 0;
    for (const auto& o : phase.value("ops", nlohmann::json::array()))
      if (o.value("kind", "") == kind && has(o.value("note", ""), note)) n += o.value("repeat", 1);
    return n;
  };
  const auto fphases = f.value("phases", nlohmann::json::array());
  expect(fphases.size() == phases.size(), "custom:fused: the same phases");
  for (std::size_t i = 0; i < fphases.size() && i < phases.size(); ++i) {
    const std::string ph = fphases[i].value("phase", "?");
    const int fused_ar = count_ops(fphases[i], "all_reduce", "fused with the residual add and RMSNorm");
    const int plain_norms = count_ops(phases[i], "norm", ""), fused_norms = count_ops(fphases[i], "norm", "");
    // the target's layers have two boundaries each; the EAGLE-3 draft layer is not built with them
    const bool target = ph == "verify" || ph == "baseline_decode";
    expect(target ? fused_ar > 0 && fused_ar % 2 == 0 : fused_ar == 0,
           ph + ": the layer boundaries' all-reduces ran fused (" + std::to_string(fused_ar) + ")");
    expect(plain_norms - fused_norms == fused_ar, ph + ": one separate norm fewer per fused boundary (" +
                                                      std::to_string(plain_norms) + " -> " +
                                                      std::to_string(fused_norms) + ")");
    // the predicted side fuses the same boundaries: the fused kernel's extra on the all-reduces,
    // the norms gone from the small kernels
    const auto& fp = fphases[i].at("predicted");
    const auto& cp = phases[i].at("predicted");
    if (target)
      expect(fp.value("allreduce_us", 0.0) > cp.value("allreduce_us", 0.0) &&
                 fp.value("other_us", 0.0) < cp.value("other_us", 0.0),
             ph + ": predicted with the fused boundaries (all-reduces " +
                 std::to_string(cp.value("allreduce_us", 0.0)) + " -> " +
                 std::to_string(fp.value("allreduce_us", 0.0)) + " us)");
    else
      expect(fp.value("allreduce_us", -1.0) == cp.value("allreduce_us", -2.0), ph + ": predicted as plain custom");
  }

  // NCCL cannot put two ranks on one GPU: refused, said once, exit 2.
  const Run nccl1 = mpirun(dir, 2, one_gpu, "replay --mpi --tp-size 2 --allreduce nccl" + kFlags);
  expect(nccl1.rc == 2, "2 ranks on one GPU with NCCL: exit 2");
  expect(lines_starting(nccl1.err[0], "error: 2 ranks on a node with 1 GPU(s): NCCL needs one GPU per rank") == 1 &&
             rank1_silent(nccl1),
         "said once, by rank 0");

  if (gpus >= 2) {
    const Run two = mpirun(dir, 2, "CUDA_VISIBLE_DEVICES=0,1",
                           "replay --mpi --tp-size 2 --allreduce nccl" + kFlags + " -o {DIR}/r.json");
    expect(two.rc == 0, "2 ranks on 2 GPUs with NCCL: exit 0");
    expect(rank1_silent(two), "rank 1 printed nothing");
    const nlohmann::json k = report(two);
    expect(k.value("gpus", 0) == 2 && note_has(k, "2 processes under MPI"), "report: gpus 2, MPI note");
    expect(k.value("shared_gpus", true) == false, "report: shared_gpus false");
    for (const auto& p : k.value("phases", nlohmann::json::array())) {
      const std::string ph = p.value("phase", "?");
      expect(p.value("collectives_skipped", -1) == 0, ph + ": no collective skipped");
      expect(p.at("measured")["allgather_us"].is_number() && p.at("measured")["allgather_us"].get<double>() > 0,
             ph + ": all-gather measured > 0");
    }
  } else {
    std::cout << "(one GPU: the 2-GPU NCCL run is left out)\n";
  }
  std::cout << "gpu_replay_mpi: " << failures << " failure(s)\n";
  return failures ? 1 : 0;
#endif
}
