// Custom all-reduce, N processes (fork/exec of this binary) sharing buffers through CUDA IPC
// and a Unix-socket rendezvous. On one GPU the processes time-share it, so the kernels' spins
// run with a long bound; every child checks its own output against the CPU reference (all
// children build the same problems from the same seeds), for every variant, inputs with special
// bit patterns included, eager and replayed from a graph (the flag-free variants 20 times, so
// their slots rotate). Also: a rank that joins but never calls must be reported by the others
// within a bounded time (a barrier variant and two flag-free ones).
// Flags: --quick (worlds 2 and 4 only). Internal: --child RANK WORLD DIR MODE.
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "car_process_group.h"
#include "car_test_util.h"

using namespace cartest;
using specsim::car::Communicator;
using specsim::car::Options;

namespace {

/// Under time-slicing a peer can be descheduled for many time slices.
constexpr std::uint64_t kChildTimeoutNs = 30'000'000'000ull;

int child_sweep(int rank, int world, const std::string& dir) {
  Options opt;
  opt.timeout_ns = kChildTimeoutNs;
  opt.max_bytes = 1 << 20;
  auto comm = Communicator::create_multi_process(rank, world, 0, dir, "sweep", opt);
  void* in = nullptr;
  void* out = nullptr;
  GPU_CHECK(cudaMalloc(&in, opt.max_bytes));
  GPU_CHECK(cudaMalloc(&out, opt.max_bytes));
  cudaStream_t st;
  GPU_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  Checker ck;
  std::vector<unsigned char> got;
  std::uint64_t seed = 77;
  auto run_one = [&](const Problem& p, Variant v, bool graph) {
    // same stream as the all-reduce: `st` does not wait for the legacy default stream
    GPU_CHECK(cudaMemcpyAsync(in, p.in[rank].data(), p.bytes(), cudaMemcpyHostToDevice, st));
    GPU_CHECK(cudaMemsetAsync(out, kPoison, p.bytes(), st));
    const std::string what = std::string(graph ? "graph " : "") + name(v) + " " + name(p.dtype) + " world " +
                             std::to_string(world) + " rank " + std::to_string(rank) + " count " +
                             std::to_string(p.count);
    try {
      if (graph) {
        cudaGraph_t g;
        cudaGraphExec_t e;
        GPU_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
        comm->allreduce(in, out, p.count, p.dtype, v, st);
        GPU_CHECK(cudaStreamEndCapture(st, &g));
        GPU_CHECK(cudaGraphInstantiate(&e, g, 0));
        GPU_CHECK(cudaGraphLaunch(e, st));
        comm->synchronize(st);
        GPU_CHECK(cudaGraphExecDestroy(e));
        GPU_CHECK(cudaGraphDestroy(g));
      } else {
        comm->allreduce(in, out, p.count, p.dtype, v, st);
        comm->synchronize(st);
      }
    } catch (const std::exception& ex) {
      ck.expect(false, what + ": threw " + ex.what());
      return false;
    }
    got.resize(p.bytes());
    GPU_CHECK(cudaMemcpyAsync(got.data(), out, p.bytes(), cudaMemcpyDeviceToHost, st));
    GPU_CHECK(cudaStreamSynchronize(st));
    const std::size_t wrong = count_wrong(p, got);
    ck.expect(wrong == 0, what + ": " + std::to_string(wrong) + " elements wrong");
    return true;  // a wrong result is counted; only a failed call ends the sweep
  };
  for (DType dt : {DType::BF16, DType::FP16, DType::FP32}) {
    const std::size_t eb = specsim::car::elem_bytes(dt);
    for (std::size_t count :
         {std::size_t{16} / eb, std::size_t{9}, std::size_t{1001}, std::size_t{43008} / eb, std::size_t{65537}}) {
      const Problem p = make_problem(dt, world, count, seed++);
      for (Variant v : specsim::car_policy::kConcreteVariants)
        if (!run_one(p, v, false)) return ck.finish("gpu_car_ipc child (stopped)") + 1;
    }
    const Problem sp = make_special_problem(dt, world, 1001, seed++);
    for (Variant v : specsim::car_policy::kConcreteVariants)
      if (!run_one(sp, v, false)) return ck.finish("gpu_car_ipc child (stopped)") + 1;
  }
  // the same call replayed from a graph, fresh inputs each time
  for (Variant v : specsim::car_policy::kConcreteVariants)
    for (int k = 0; k < (specsim::car_policy::is_flag_free(v) ? 20 : 3); ++k)
      if (!run_one(make_problem(DType::BF16, world, 21504, seed++), v, true))
        return ck.finish("gpu_car_ipc child (stopped)") + 1;
  GPU_CHECK(cudaFree(in));
  GPU_CHECK(cudaFree(out));
  return ck.finish(("gpu_car_ipc child " + std::to_string(rank) + "/" + std::to_string(world)).c_str());
}

/// The last rank joins, then leaves without calling; the others must get the timeout error.
int child_absent(int rank, int world, const std::string& dir, Variant v) {
  Options opt;
  opt.timeout_ns = 500'000'000;
  opt.max_bytes = 1 << 16;
  auto comm = Communicator::create_multi_process(rank, world, 0, dir, "absent", opt);
  if (rank == world - 1) {
    std::this_thread::sleep_for(std::chrono::seconds(3));  // keep its memory mapped, never call
    return 0;
  }
  void* buf = nullptr;
  GPU_CHECK(cudaMalloc(&buf, 8192));
  GPU_CHECK(cudaMemset(buf, 0x3c, 8192));
  const auto t0 = std::chrono::steady_clock::now();
  std::string msg;
  try {
    comm->allreduce(buf, buf, 4096, DType::BF16, v, nullptr);
    comm->synchronize(nullptr);
  } catch (const std::runtime_error& e) {
    msg = e.what();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string want = "rank " + std::to_string(world - 1) + " never arrived";
  std::printf("absent child %d: %.3f s: %s\n", rank, s, msg.c_str());
  GPU_CHECK(cudaFree(buf));
  return msg.find(want) != std::string::npos && s < 20.0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 6 && std::string(argv[1]) == "--child") {
    const int rank = std::stoi(argv[2]), world = std::stoi(argv[3]);
    const std::string dir = argv[4], mode = argv[5];
    try {
      if (mode == "absent") return child_absent(rank, world, dir, Variant::OneShotPush);
      if (mode == "absent-ll") return child_absent(rank, world, dir, Variant::OneShotLL);
      if (mode == "absent-bcast") return child_absent(rank, world, dir, Variant::OneShotLLBcast);
      return child_sweep(rank, world, dir);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "FAIL: child %d/%d: %s\n", rank, world, e.what());
      return 1;
    }
  }
  bool quick = argc == 2 && std::string(argv[1]) == "--quick";
  if (argc > 1 && !quick) {
    std::fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
    return 2;
  }
  devices_or_skip(1, "gpu_car_ipc");
  Checker ck;
  const std::vector<int> worlds = quick ? std::vector<int>{2, 4} : std::vector<int>{2, 3, 4, 5, 6, 7, 8};
  for (int world : worlds) {
    const auto t0 = std::chrono::steady_clock::now();
    const bool ok = run_group("/proc/self/exe", world, "sweep");
    std::printf("ipc world %d: %s (%.1f s)\n", world, ok ? "ok" : "FAILED",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    ck.expect(ok, "ipc sweep world " + std::to_string(world));
  }
  ck.expect(run_group("/proc/self/exe", 4, "absent"), "ipc absent peer world 4");
  ck.expect(run_group("/proc/self/exe", 4, "absent-ll"), "ipc absent peer world 4, one-shot-ll");
  ck.expect(run_group("/proc/self/exe", 4, "absent-bcast"), "ipc absent peer world 4, one-shot-ll-bcast");
  return ck.finish("gpu_car_ipc");
}
