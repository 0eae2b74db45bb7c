// Custom all-reduce on N real GPUs, single-process mode (one thread per GPU, peer access).
// Skips, saying so, with fewer than 2 GPUs or without peer access between them.
#include <string>
#include <thread>
#include <vector>

#include "car_test_util.h"

using namespace cartest;
using specsim::car::Communicator;
using specsim::car::Options;

namespace {

int run() {
  const int n = devices_or_skip(2, "gpu_car_multigpu");
  Checker ck;
  Options opt;
  opt.max_bytes = std::size_t{8} << 20;
  std::uint64_t seed = 5000;
  for (int world = 2; world <= std::min(n, specsim::car::kMaxRanks); ++world) {
    std::vector<int> devs;
    for (int d = 0; d < world; ++d) devs.push_back(d);
    std::vector<std::unique_ptr<Communicator>> comms;
    try {
      comms = Communicator::create_single_process(devs, opt);
    } catch (const std::runtime_error& e) {
      if (std::string(e.what()).find("peer-to-peer") != std::string::npos) {
        std::printf("SKIP: %s\n", e.what());
        return kSkip;
      }
      throw;
    }
    std::printf("world %d: link %s\n", world, specsim::car::to_string(comms[0]->link()).data());
    std::vector<void*> in(world), out(world);
    std::vector<cudaStream_t> st(world);
    for (int r = 0; r < world; ++r) {
      GPU_CHECK(cudaSetDevice(r));
      GPU_CHECK(cudaMalloc(&in[r], opt.max_bytes));
      GPU_CHECK(cudaMalloc(&out[r], opt.max_bytes));
      GPU_CHECK(cudaStreamCreateWithFlags(&st[r], cudaStreamNonBlocking));
    }
    for (DType dt : {DType::BF16, DType::FP16, DType::FP32}) {
      for (std::size_t count : sweep_counts(dt, false)) {
        const Problem p = make_problem(dt, world, count, seed++);
        for (Variant v : {Variant::OneShotPull, Variant::OneShotPush, Variant::TwoShot, Variant::Auto}) {
          std::vector<std::string> errors(world);
          std::vector<std::size_t> wrong(world, 0);
          std::vector<std::thread> threads;
          for (int r = 0; r < world; ++r) {
            threads.emplace_back([&, r] {
              try {
                GPU_CHECK(cudaSetDevice(r));
                GPU_CHECK(cudaMemcpyAsync(in[r], p.in[r].data(), p.bytes(), cudaMemcpyHostToDevice, st[r]));
                GPU_CHECK(cudaMemsetAsync(out[r], kPoison, p.bytes(), st[r]));
                comms[r]->allreduce(in[r], out[r], count, dt, v, st[r]);
                comms[r]->synchronize(st[r]);
                std::vector<unsigned char> got(p.bytes());
                GPU_CHECK(cudaMemcpy(got.data(), out[r], p.bytes(), cudaMemcpyDeviceToHost));
                wrong[r] = count_wrong(p, got);
              } catch (const std::exception& e) {
                errors[r] = e.what();
              }
            });
          }
          for (auto& t : threads) t.join();
          for (int r = 0; r < world; ++r) {
            const std::string what = std::string(name(v)) + " " + name(dt) + " world " + std::to_string(world) +
                                     " rank " + std::to_string(r) + " count " + std::to_string(count);
            ck.expect(errors[r].empty(), what + ": " + errors[r]);
            ck.expect(wrong[r] == 0, what + ": " + std::to_string(wrong[r]) + " wrong");
          }
        }
      }
    }
    for (int r = 0; r < world; ++r) {
      GPU_CHECK(cudaSetDevice(r));
      GPU_CHECK(cudaFree(in[r]));
      GPU_CHECK(cudaFree(out[r]));
      GPU_CHECK(cudaStreamDestroy(st[r]));
    }
  }
  return ck.finish("gpu_car_multigpu");
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {  // a failed CUDA call or set-up: a failure, not a skip
    std::fprintf(stderr, "FAIL: %s\n", e.what());
    return 1;
  }
}
