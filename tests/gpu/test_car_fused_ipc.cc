// The fused all-reduce + residual add + RMSNorm with one process a rank (fork/exec of this binary,
// CUDA IPC, all on one GPU): the per-rank call that real peers make
// (Communicator::allreduce_add_rmsnorm), where gpu_car_fused drives every rank from one launch.
// Every child builds the same problems from the same seeds and checks its own outputs: the new
// residual bitwise against the CPU reference, the norm within 2 ulps of it and bitwise equal to
// the child's own plain all-reduce followed by the separate add+RMSNorm (whose input, the
// all-reduce output, is checked bitwise too, so every rank holds the same bits), the fp8 copy
// bitwise against the host's e4m3 of the norm. Also in place, a graph of fused calls between
// one-shot-ll calls replayed with fresh outputs, and a rank that joins but never calls, reported by
// the others within the bound. On one GPU the processes time-share it, so spins run with a long
// bound. Flags: --quick (split only, worlds 2 and 4). Internal: --child RANK WORLD DIR MODE.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "car_fused_test_util.h"
#include "car_process_group.h"

namespace car = specsim::car;
using namespace cartest;

namespace {

/// Under time-slicing a peer can be descheduled for many time slices.
constexpr std::uint64_t kChildTimeoutNs = 30'000'000'000ull;
constexpr std::size_t kMaxBytes = std::size_t{1} << 20;  // the flag-free cap: 64 x 8192 bf16

struct Shape {
  std::size_t tokens, hidden;
  DType dt;
  bool in_place, quant;
};

/// One shape: the unfused pair, then the fused call, then this rank's checks. False when a call threw.
bool fused_case(Checker& ck, car::Communicator& comm, RankBufs& b, car::FusedVariant v, int rank, int world,
                const Shape& sh, cudaStream_t st) {
  const std::size_t count = sh.tokens * sh.hidden, bytes = count * 2;
  const std::string tag = std::string(car::to_string(v)) + " world " + std::to_string(world) + " rank " +
                          std::to_string(rank) + " " + name(sh.dt) + " " + std::to_string(sh.tokens) + "x" +
                          std::to_string(sh.hidden) + (sh.in_place ? " in place" : "") + (sh.quant ? " fp8" : "");
  const FusedProblem p =
      make_fused_problem(sh.dt, world, sh.tokens, sh.hidden, 29 + sh.tokens * 31 + sh.hidden + world);
  GPU_CHECK(cudaMemcpyAsync(b.in, p.ar.in[static_cast<std::size_t>(rank)].data(), bytes, cudaMemcpyHostToDevice, st));
  GPU_CHECK(cudaMemcpyAsync(b.res_in, p.residual.data(), bytes, cudaMemcpyHostToDevice, st));
  GPU_CHECK(cudaMemcpyAsync(b.weight, p.weight.data(), sh.hidden * 2, cudaMemcpyHostToDevice, st));
  for (void* o : {b.res_out, b.norm, b.norm2, b.res2, b.ar}) GPU_CHECK(cudaMemsetAsync(o, kPoison, bytes, st));
  GPU_CHECK(cudaMemsetAsync(b.quant, 0x55, bytes / 2, st));
  GPU_CHECK(cudaMemsetAsync(b.quant2, 0x66, bytes / 2, st));
  car::FusedNormShape s;
  s.tokens = sh.tokens, s.hidden = sh.hidden, s.dtype = sh.dt, s.eps = p.eps, s.quant_scale = 0.05f;
  const car::FusedNormIo fio{b.in,
                             b.res_in,
                             sh.in_place ? b.res_in : b.res_out,
                             b.weight,
                             sh.in_place ? b.in : b.norm,
                             sh.quant ? b.quant : nullptr};
  const car::FusedNormIo nio{b.ar, b.res_in, b.res2, b.weight, b.norm2, sh.quant ? b.quant2 : nullptr};
  try {
    // the unfused pair first (in place would overwrite the inputs it reads)
    comm.allreduce(b.in, b.ar, count, sh.dt, Variant::OneShotLL, st);
    car::add_rmsnorm(std::span<const car::FusedNormIo>(&nio, 1), s, st, separate_for(v, sh.hidden));
    comm.synchronize(st);
    if (auto why = car::fused_variant_refuse_reason(v, sh.hidden)) {
      bool refused = false;
      try {
        comm.allreduce_add_rmsnorm(fio, s, st);
      } catch (const std::runtime_error& e) {
        refused = std::string(e.what()).find("refused") != std::string::npos;
      }
      return ck.expect(refused, tag + ": refused before launch (" + *why + ")");
    }
    comm.allreduce_add_rmsnorm(fio, s, st);
    comm.synchronize(st);
  } catch (const std::exception& e) {
    ck.expect(false, tag + ": threw " + e.what());
    return false;
  }
  const auto ar = fetch(b.ar, bytes), res = fetch(fio.residual_out, bytes);
  const auto norm = fetch(fio.norm_out, bytes), res2 = fetch(b.res2, bytes), norm2 = fetch(b.norm2, bytes);
  const std::vector<unsigned char> q = sh.quant ? fetch(b.quant, bytes / 2) : std::vector<unsigned char>{};
  const std::vector<unsigned char> q2 = sh.quant ? fetch(b.quant2, bytes / 2) : std::vector<unsigned char>{};
  ck.expect(ar == p.ar.ref, tag + ": plain all-reduce bitwise = CPU");
  check_fused_rank(ck, tag + ":", p, sh.dt, s.quant_scale, res, res2, norm, norm2, sh.quant ? &q : nullptr,
                   sh.quant ? &q2 : nullptr);
  return true;
}

/// A graph of fused calls between one-shot-ll calls (both parities of the shared call count),
/// replayed with poisoned outputs: every replay's outputs right.
void graph_case(Checker& ck, car::Communicator& comm, RankBufs& b, car::FusedVariant v, int rank, int world,
                cudaStream_t st) {
  const DType dt = DType::BF16;
  const std::size_t tokens = 4, hidden = 7168, count = tokens * hidden, bytes = count * 2;
  const FusedProblem p = make_fused_problem(dt, world, tokens, hidden, 4242 + world);
  GPU_CHECK(cudaMemcpyAsync(b.in, p.ar.in[static_cast<std::size_t>(rank)].data(), bytes, cudaMemcpyHostToDevice, st));
  GPU_CHECK(cudaMemcpyAsync(b.res_in, p.residual.data(), bytes, cudaMemcpyHostToDevice, st));
  GPU_CHECK(cudaMemcpyAsync(b.weight, p.weight.data(), hidden * 2, cudaMemcpyHostToDevice, st));
  car::FusedNormShape s;
  s.tokens = tokens, s.hidden = hidden, s.dtype = dt, s.eps = p.eps;
  const car::FusedNormIo fio{b.in, b.res_in, b.res_out, b.weight, b.norm, nullptr};
  const car::FusedNormIo nio{b.ar, b.res_in, b.res2, b.weight, b.norm2, nullptr};
  const std::string tag =
      std::string(car::to_string(v)) + " graph world " + std::to_string(world) + " rank " + std::to_string(rank);
  try {
    // the expected norm: the separate kernel on this rank's plain all-reduce
    comm.allreduce(b.in, b.ar, count, dt, Variant::OneShotLL, st);
    car::add_rmsnorm(std::span<const car::FusedNormIo>(&nio, 1), s, st, separate_for(v, hidden));
    comm.synchronize(st);
    const auto want_norm = fetch(b.norm2, bytes);
    cudaGraph_t g;
    cudaGraphExec_t ge;
    GPU_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    for (int k = 0; k < 3; ++k) {
      comm.allreduce_add_rmsnorm(fio, s, st);
      comm.allreduce(b.in, b.ar, count, dt, Variant::OneShotLL, st);
    }
    GPU_CHECK(cudaStreamEndCapture(st, &g));
    GPU_CHECK(cudaGraphInstantiate(&ge, g, 0));
    for (int rep = 0; rep < 5; ++rep) {
      for (void* o : {b.norm, b.res_out, b.ar}) GPU_CHECK(cudaMemsetAsync(o, kPoison, bytes, st));
      GPU_CHECK(cudaGraphLaunch(ge, st));
      comm.synchronize(st);
      const std::string rtag = tag + " replay " + std::to_string(rep);
      ck.expect(fetch(b.res_out, bytes) == p.new_residual && fetch(b.norm, bytes) == want_norm,
                rtag + ": fused outputs");
      ck.expect(fetch(b.ar, bytes) == p.ar.ref, rtag + ": one-shot-ll between fused calls");
    }
    GPU_CHECK(cudaGraphExecDestroy(ge));
    GPU_CHECK(cudaGraphDestroy(g));
  } catch (const std::exception& e) {
    ck.expect(false, tag + ": threw " + e.what());
  }
}

int child_fused(int rank, int world, const std::string& dir, car::FusedVariant v) {
  car::Options opt;
  opt.timeout_ns = kChildTimeoutNs;
  opt.max_bytes = kMaxBytes;
  opt.fused_variant = v;
  auto comm = car::Communicator::create_multi_process(rank, world, 0, dir, "fused", opt);
  cudaStream_t st;
  GPU_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  RankBufs b;
  b.alloc(kMaxBytes, kMaxBytes);
  Checker ck;
  const Shape shapes[] = {{1, 7168, DType::BF16, false, false},  {3, 7168, DType::BF16, false, true},
                          {3, 7168, DType::FP16, false, true},   {5, 4096, DType::BF16, true, true},
                          {64, 8192, DType::BF16, false, false}, {2, 1032, DType::BF16, false, true},
                          {3, 16384, DType::BF16, false, false}};
  for (const Shape& sh : shapes)
    if (!fused_case(ck, *comm, b, v, rank, world, sh, st)) return ck.finish("gpu_car_fused_ipc child (stopped)") + 1;
  graph_case(ck, *comm, b, v, rank, world, st);
  GPU_CHECK(cudaStreamDestroy(st));
  b.free_all();
  return ck.finish(("gpu_car_fused_ipc child " + std::string(car::to_string(v)) + " " + std::to_string(rank) + "/" +
                    std::to_string(world))
                       .c_str());
}

/// The last rank joins, then leaves without calling; the others must get the timeout error.
int child_absent(int rank, int world, const std::string& dir, car::FusedVariant v) {
  car::Options opt;
  opt.timeout_ns = 500'000'000;
  opt.max_bytes = 1 << 16;
  opt.fused_variant = v;
  auto comm = car::Communicator::create_multi_process(rank, world, 0, dir, "absent", opt);
  if (rank == world - 1) {
    std::this_thread::sleep_for(std::chrono::seconds(3));  // keep its memory mapped, never call
    return 0;
  }
  const std::size_t tokens = 2, hidden = 4096, bytes = tokens * hidden * 2;
  void* buf[5] = {};
  for (void*& p : buf) {
    GPU_CHECK(cudaMalloc(&p, bytes));
    GPU_CHECK(cudaMemset(p, 0, bytes));
  }
  car::FusedNormShape s;
  s.tokens = tokens, s.hidden = hidden;
  const car::FusedNormIo io{buf[0], buf[1], buf[2], buf[3], buf[4], nullptr};
  const auto t0 = std::chrono::steady_clock::now();
  std::string msg;
  try {
    comm->allreduce_add_rmsnorm(io, s, nullptr);
    comm->synchronize(nullptr);
  } catch (const std::runtime_error& e) {
    msg = e.what();
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  bool refused = false;  // a failed communicator refuses further calls
  try {
    comm->allreduce_add_rmsnorm(io, s, nullptr);
  } catch (const std::runtime_error&) {
    refused = true;
  }
  std::printf("absent child %s %d: %.3f s: %s\n", car::to_string(v).data(), rank, secs, msg.c_str());
  for (void* p : buf) GPU_CHECK(cudaFree(p));
  const std::string want = "rank " + std::to_string(world - 1) + " never arrived";
  return msg.find(want) != std::string::npos && secs < 20.0 && refused ? 0 : 1;
}

/// "fused:VARIANT" or "absent:VARIANT" -> the child's job.
int run_child(int rank, int world, const std::string& dir, const std::string& mode) {
  const auto colon = mode.find(':');
  const auto v = colon == std::string::npos ? std::nullopt : car::parse_fused_variant(mode.substr(colon + 1));
  if (!v) throw std::runtime_error("unknown child mode '" + mode + "'");
  if (mode.compare(0, colon, "fused") == 0) return child_fused(rank, world, dir, *v);
  if (mode.compare(0, colon, "absent") == 0) return child_absent(rank, world, dir, *v);
  throw std::runtime_error("unknown child mode '" + mode + "'");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 6 && std::string(argv[1]) == "--child") {
    const int rank = std::stoi(argv[2]), world = std::stoi(argv[3]);
    try {
      return run_child(rank, world, argv[4], argv[5]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "FAIL: child %d/%d: %s\n", rank, world, e.what());
      return 1;
    }
  }
  const bool quick = argc == 2 && std::string(argv[1]) == "--quick";
  if (argc > 1 && !quick) {
    std::fprintf(stderr, "error: usage: %s [--quick]\n", argv[0]);
    return 2;
  }
  devices_or_skip(1, "gpu_car_fused_ipc");
  Checker ck;
  std::vector<car::FusedVariant> variants(std::begin(kFusedVariants), std::end(kFusedVariants));
  if (quick) variants = {car::FusedVariant::Split};
  const std::vector<int> worlds = quick ? std::vector<int>{2, 4} : std::vector<int>{2, 3, 4, 8};
  for (car::FusedVariant v : variants) {
    const std::string vn(car::to_string(v));
    for (int world : worlds) {
      const auto t0 = std::chrono::steady_clock::now();
      const bool ok = run_group("/proc/self/exe", world, ("fused:" + vn).c_str());
      std::printf("fused ipc %s world %d: %s (%.1f s)\n", vn.c_str(), world, ok ? "ok" : "FAILED",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      ck.expect(ok, "fused ipc " + vn + " world " + std::to_string(world));
    }
    ck.expect(run_group("/proc/self/exe", 4, ("absent:" + vn).c_str()), "fused ipc " + vn + ": absent peer world 4");
  }
  return ck.finish("gpu_car_fused_ipc");
}
