// Custom all-reduce on N real GPUs, single-process mode (one thread per GPU, peer access): every
// variant x dtype x size (the flag-free ones up to their cap), inputs full of special bit
// patterns, and one CUDA graph per GPU of many back-to-back calls (variants and sizes mixed)
// replayed many times with fresh inputs, where a fast rank can run a call ahead of a slow one.
// Skips, saying so, with fewer than 2 GPUs or without peer access between them.
// Flags: --quick (short size list, fewer replays: for compute-sanitizer), --variant NAME (only
// that variant in the sweep and the graph; repeatable: the graph takes the first), --replays N.
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "car_test_util.h"

using namespace cartest;
using specsim::car::Communicator;
using specsim::car::Options;
namespace policy = specsim::car_policy;

namespace {

struct Settings {
  bool quick = false;
  std::vector<Variant> variants;  ///< empty: every concrete variant and Auto
  int replays = 200;
};

/// Per-rank device buffers and streams of one world.
struct Ranks {
  int world = 0;
  std::vector<void*> in, out;
  std::vector<cudaStream_t> st;
  Ranks(int w, std::size_t bytes) : world(w), in(w), out(w), st(w) {
    for (int r = 0; r < w; ++r) {
      GPU_CHECK(cudaSetDevice(r));
      GPU_CHECK(cudaMalloc(&in[r], bytes));
      GPU_CHECK(cudaMalloc(&out[r], bytes));
      GPU_CHECK(cudaStreamCreateWithFlags(&st[r], cudaStreamNonBlocking));
    }
  }
  ~Ranks() {
    for (int r = 0; r < world; ++r) {
      cudaSetDevice(r);
      cudaFree(in[r]);
      cudaFree(out[r]);
      cudaStreamDestroy(st[r]);
    }
  }
  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;
};

/// One eager call on every rank (one thread each); checks every rank's output.
void one_call(Checker& ck, std::vector<std::unique_ptr<Communicator>>& comms, Ranks& R, const Problem& p, Variant v,
              const std::string& tag) {
  const int world = R.world;
  std::vector<std::string> errors(world);
  std::vector<std::size_t> wrong(world, 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        GPU_CHECK(cudaSetDevice(r));
        GPU_CHECK(cudaMemcpyAsync(R.in[r], p.in[r].data(), p.bytes(), cudaMemcpyHostToDevice, R.st[r]));
        GPU_CHECK(cudaMemsetAsync(R.out[r], kPoison, p.bytes(), R.st[r]));
        comms[r]->allreduce(R.in[r], R.out[r], p.count, p.dtype, v, R.st[r]);
        comms[r]->synchronize(R.st[r]);
        std::vector<unsigned char> got(p.bytes());
        GPU_CHECK(cudaMemcpy(got.data(), R.out[r], p.bytes(), cudaMemcpyDeviceToHost));
        wrong[r] = count_wrong(p, got);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < world; ++r) {
    const std::string what = tag + std::string(name(v)) + " " + name(p.dtype) + " world " + std::to_string(world) +
                             " rank " + std::to_string(r) + " count " + std::to_string(p.count);
    ck.expect(errors[r].empty(), what + ": " + errors[r]);
    ck.expect(wrong[r] == 0, what + ": " + std::to_string(wrong[r]) + " wrong");
  }
}

/// One graph per GPU holding `calls` back to back (no host work between them), replayed with fresh
/// inputs; a rank may finish call k and start k+1 while a peer is still in k.
void chain(Checker& ck, std::vector<std::unique_ptr<Communicator>>& comms, int world, const Settings& s,
           std::uint64_t& seed) {
  struct Call {
    Variant v;
    DType dt;
    std::size_t count;
  };
  std::vector<Call> calls = {{Variant::OneShotLL, DType::BF16, 21504},
                             {Variant::OneShotLL, DType::BF16, 7168},
                             {Variant::OneShotLLPull, DType::FP16, 1001},
                             {Variant::OneShotPull, DType::BF16, 21504},
                             {Variant::OneShotLL, DType::FP32, 131072},
                             {Variant::TwoShot, DType::BF16, 57344},
                             {Variant::OneShotLL, DType::BF16, 5},
                             {Variant::OneShotPush, DType::FP32, 999},
                             {Variant::OneShotLLPull, DType::BF16, 21504},
                             {Variant::Auto, DType::BF16, 21504},
                             // one-shot-ll-bcast: 4 calls a replay on 3 slots, longer and shorter in turn
                             {Variant::OneShotLLBcast, DType::BF16, 21504},
                             {Variant::OneShotLLBcast, DType::FP32, 131072},
                             {Variant::OneShotLLBcast, DType::BF16, 5},
                             {Variant::OneShotLLBcast, DType::FP16, 1001}};
  if (!s.variants.empty())
    for (Call& c : calls) c.v = s.variants.front();
  const int n = static_cast<int>(calls.size());
  std::vector<std::unique_ptr<Ranks>> bufs;
  for (const Call& c : calls) bufs.push_back(std::make_unique<Ranks>(world, c.count * specsim::car::elem_bytes(c.dt)));
  std::vector<cudaGraph_t> g(world);
  std::vector<cudaGraphExec_t> x(world);
  for (int r = 0; r < world; ++r) {
    GPU_CHECK(cudaSetDevice(r));
    GPU_CHECK(cudaStreamBeginCapture(bufs[0]->st[r], cudaStreamCaptureModeThreadLocal));
    for (int k = 0; k < n; ++k)
      comms[r]->allreduce(bufs[k]->in[r], bufs[k]->out[r], calls[k].count, calls[k].dt, calls[k].v, bufs[0]->st[r]);
    GPU_CHECK(cudaStreamEndCapture(bufs[0]->st[r], &g[r]));
  }
  for (int r = 0; r < world; ++r) {
    GPU_CHECK(cudaSetDevice(r));
    GPU_CHECK(cudaGraphInstantiate(&x[r], g[r], 0));
  }
  long bad = 0;
  std::vector<unsigned char> got;
  for (int rep = 0; rep < s.replays; ++rep) {
    std::vector<Problem> ps;
    for (int k = 0; k < n; ++k) {
      ps.push_back(rep % 3 == 2 ? make_special_problem(calls[k].dt, world, calls[k].count, seed++)
                                : make_problem(calls[k].dt, world, calls[k].count, seed++));
      for (int r = 0; r < world; ++r) {
        GPU_CHECK(cudaSetDevice(r));
        GPU_CHECK(cudaMemcpy(bufs[k]->in[r], ps[k].in[r].data(), ps[k].bytes(), cudaMemcpyHostToDevice));
        GPU_CHECK(cudaMemset(bufs[k]->out[r], kPoison, ps[k].bytes()));
      }
    }
    for (int r = 0; r < world; ++r) {
      GPU_CHECK(cudaSetDevice(r));
      GPU_CHECK(cudaDeviceSynchronize());
    }
    for (int r = 0; r < world; ++r) {  // every GPU's graph in flight at once
      GPU_CHECK(cudaSetDevice(r));
      GPU_CHECK(cudaGraphLaunch(x[r], bufs[0]->st[r]));
    }
    for (int r = 0; r < world; ++r) {
      GPU_CHECK(cudaSetDevice(r));
      comms[r]->synchronize(bufs[0]->st[r]);
    }
    for (int k = 0; k < n; ++k)
      for (int r = 0; r < world; ++r) {
        got.resize(ps[k].bytes());
        GPU_CHECK(cudaSetDevice(r));
        GPU_CHECK(cudaMemcpy(got.data(), bufs[k]->out[r], ps[k].bytes(), cudaMemcpyDeviceToHost));
        if (count_wrong(ps[k], got) != 0) ++bad;
      }
  }
  ck.expect(bad == 0,
            "chain graph world " + std::to_string(world) + ": " + std::to_string(bad) + " rank outputs wrong");
  std::printf("world %d: chain graph of %d calls x %d replays, %ld rank outputs wrong\n", world, n, s.replays, bad);
  for (int r = 0; r < world; ++r) {
    GPU_CHECK(cudaSetDevice(r));
    GPU_CHECK(cudaGraphExecDestroy(x[r]));
    GPU_CHECK(cudaGraphDestroy(g[r]));
  }
}

}  // namespace

int run(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      s.quick = true;
      s.replays = 10;
    } else if (a == "--variant" && i + 1 < argc) {
      const auto v = specsim::car::parse_variant(argv[++i]);
      if (!v) {
        std::fprintf(stderr, "error: unknown variant '%s' (--variant)\n", argv[i]);
        return 2;
      }
      s.variants.push_back(*v);
    } else if (a == "--replays" && i + 1 < argc) {
      s.replays = std::stoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--variant NAME] [--replays N]\n", argv[0]);
      return 2;
    }
  }
  std::vector<Variant> variants = s.variants;
  if (variants.empty()) {
    variants.assign(std::begin(policy::kConcreteVariants), std::end(policy::kConcreteVariants));
    variants.push_back(Variant::Auto);
  }
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
    Ranks R(world, opt.max_bytes);
    for (DType dt : {DType::BF16, DType::FP16, DType::FP32}) {
      for (std::size_t count : sweep_counts(dt, s.quick)) {
        const Problem p = make_problem(dt, world, count, seed++);
        for (Variant v : variants)
          if (!(policy::is_flag_free(v) && p.bytes() > policy::kLlMaxBytes)) one_call(ck, comms, R, p, v, "");
      }
      for (std::size_t count : {std::size_t{3}, std::size_t{21504}}) {
        const Problem p = make_special_problem(dt, world, count, seed++);
        for (Variant v : variants) one_call(ck, comms, R, p, v, "special values ");
      }
    }
    chain(ck, comms, world, s, seed);
  }
  return ck.finish("gpu_car_multigpu");
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {  // a failed CUDA call or set-up: a failure, not a skip
    std::fprintf(stderr, "FAIL: %s\n", e.what());
    return 1;
  }
}
