// Custom all-reduce, N processes started by mpirun on ONE GPU, CUDA IPC handles exchanged with
// MPI_Allgather (kernels/car_mpi.cc), no rendezvous directory. Every rank checks its own output
// against the CPU reference (all ranks build the same problems from the same seeds), eager and
// from a CUDA graph; failures are summed over MPI so every rank exits with the same verdict.
// Also: create_multi_process under mpirun takes the MPI path (its directory does not exist), and
// a rank/world that disagrees with MPI_COMM_WORLD is refused before any communication.
// Run: mpirun -np 4 gpu_car_mpi. Bare (not under mpirun) or built without MPI: SKIP, exit 77.
#include <string>
#include <vector>

#include "car_test_util.h"

#ifdef SPECSIM_CAR_MPI
#include <mpi.h>
#endif

using namespace cartest;
using specsim::car::Communicator;
using specsim::car::Options;

#ifdef SPECSIM_CAR_MPI
namespace {

/// Ranks time-share one GPU: a peer can be descheduled for many time slices.
constexpr std::uint64_t kTimeoutNs = 30'000'000'000ull;

void sweep(Communicator& comm, int rank, int world, Checker& ck, const char* label) {
  const std::size_t max_bytes = comm.max_bytes();
  void* in = nullptr;
  void* out = nullptr;
  GPU_CHECK(cudaMalloc(&in, max_bytes));
  GPU_CHECK(cudaMalloc(&out, max_bytes));
  cudaStream_t st;
  GPU_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  std::vector<unsigned char> got;
  std::uint64_t seed = 991;
  auto run_one = [&](const Problem& p, Variant v, bool graph) {
    GPU_CHECK(cudaMemcpyAsync(in, p.in[rank].data(), p.bytes(), cudaMemcpyHostToDevice, st));
    GPU_CHECK(cudaMemsetAsync(out, kPoison, p.bytes(), st));
    const std::string what = std::string(label) + (graph ? " graph " : " ") + name(v) + " " + name(p.dtype) +
                             " world " + std::to_string(world) + " rank " + std::to_string(rank) + " count " +
                             std::to_string(p.count);
    try {
      if (graph) {
        cudaGraph_t g;
        cudaGraphExec_t e;
        GPU_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        comm.allreduce(in, out, p.count, p.dtype, v, st);
        GPU_CHECK(cudaStreamEndCapture(st, &g));
        GPU_CHECK(cudaGraphInstantiate(&e, g, 0));
        GPU_CHECK(cudaGraphLaunch(e, st));
        comm.synchronize(st);
        GPU_CHECK(cudaGraphExecDestroy(e));
        GPU_CHECK(cudaGraphDestroy(g));
      } else {
        comm.allreduce(in, out, p.count, p.dtype, v, st);
        comm.synchronize(st);
      }
    } catch (const std::exception& ex) {
      ck.expect(false, what + ": threw " + ex.what());
      return;
    }
    got.resize(p.bytes());
    GPU_CHECK(cudaMemcpyAsync(got.data(), out, p.bytes(), cudaMemcpyDeviceToHost, st));
    GPU_CHECK(cudaStreamSynchronize(st));
    const std::size_t wrong = count_wrong(p, got);
    ck.expect(wrong == 0, what + ": " + std::to_string(wrong) + " elements wrong");
  };
  for (DType dt : {DType::BF16, DType::FP16, DType::FP32}) {
    const std::size_t eb = specsim::car::elem_bytes(dt);
    for (std::size_t count :
         {std::size_t{16} / eb, std::size_t{9}, std::size_t{1001}, std::size_t{43008} / eb, std::size_t{65537}}) {
      const Problem p = make_problem(dt, world, count, seed++);
      for (Variant v : {Variant::OneShotPull, Variant::OneShotPush, Variant::TwoShot, Variant::Auto})
        run_one(p, v, false);
    }
  }
  for (Variant v : {Variant::OneShotPull, Variant::OneShotPush, Variant::TwoShot})
    for (int k = 0; k < 3; ++k) run_one(make_problem(DType::BF16, world, 21504, seed++), v, true);
  GPU_CHECK(cudaStreamDestroy(st));
  GPU_CHECK(cudaFree(in));
  GPU_CHECK(cudaFree(out));
}

}  // namespace
#endif

int main(int argc, char** argv) {
#ifndef SPECSIM_CAR_MPI
  (void)argc, (void)argv;
  std::printf("SKIP: built without MPI (gpu_car_mpi)\n");
  return kSkip;
#else
  if (!specsim::car::launched_by_mpirun()) {
    std::printf("SKIP: not launched by mpirun (run: mpirun -np 4 %s) (gpu_car_mpi)\n", argv[0]);
    return kSkip;
  }
  devices_or_skip(1, "gpu_car_mpi");  // every rank sees the same devices: all skip together
  MPI_Init(&argc, &argv);
  int rank = 0, world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (world < 2 || world > 8) {
    if (rank == 0) std::printf("SKIP: gpu_car_mpi needs 2..8 ranks, mpirun gave %d\n", world);
    MPI_Finalize();
    return kSkip;
  }
  Checker ck;
  Options opt;
  opt.timeout_ns = kTimeoutNs;
  opt.max_bytes = 1 << 20;
  try {
    auto comm = Communicator::create_mpi(0, opt);
    ck.expect(comm->rank() == rank && comm->world() == world, "create_mpi rank/world from MPI_COMM_WORLD");
    sweep(*comm, rank, world, ck, "create_mpi");
    // The plain multi-process entry point under mpirun: MPI, not the (absent) socket directory.
    auto comm2 = Communicator::create_multi_process(rank, world, 0, "/nonexistent/specsim-car-dir", "x", opt, 5.0);
    sweep(*comm2, rank, world, ck, "create_multi_process");
  } catch (const std::exception& e) {
    ck.expect(false, std::string("rank ") + std::to_string(rank) + ": " + e.what());
  }
  // A rank that disagrees with MPI_COMM_WORLD: refused locally, naming both, no hang.
  std::string msg;
  try {
    Communicator::create_multi_process((rank + 1) % world, world, 0, "/nonexistent", "y", opt, 5.0);
  } catch (const std::runtime_error& e) {
    msg = e.what();
  }
  ck.expect(msg.find("MPI_COMM_WORLD says rank " + std::to_string(rank)) != std::string::npos,
            "mismatched rank refused (got: '" + msg + "')");
  long failures = ck.failures, checks = ck.checks, all_failures = 0, all_checks = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&checks, &all_checks, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("gpu_car_mpi: %d ranks on one GPU over MPI: %ld checks, %ld failures\n", world, all_checks,
                all_failures);
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
#endif
}
