// Custom all-reduce, N virtual ranks on one GPU (the kernels cannot tell them from GPUs):
// the full correctness sweep (variant x dtype x world 2..8 x 16 B..8 MiB, odd sizes; the
// flag-free variants up to their cap, refused above), inputs full of special bit patterns (the
// flag-free variants' reserved value, NaNs, infinities, signed zeros, subnormals), in-place
// calls, graph capture with 1000 replays on fresh inputs, one graph of many calls of mixed
// variants and sizes replayed many times (the flag-free slots rotate across calls and block
// counts), refusals that launch nothing, and a peer that never arrives. Flags: --quick (short
// list, for compute-sanitizer), --timeout-ms N (kernel spin bound), --replays N, --variant NAME
// (repeatable: the sweep, graphs and absent-peer checks for these variants only).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "car_test_util.h"

using namespace cartest;
using specsim::car::Communicator;
using specsim::car::Options;

namespace {

struct Settings {
  bool quick = false;
  std::uint64_t timeout_ns = 2'000'000'000;
  int replays = 1000;
  std::vector<Variant> only;  ///< --variant: the variants to check (empty: all)
};

/// The variants of `all` that --variant selected (all of them without --variant).
std::vector<Variant> selected(const Settings& s, const std::vector<Variant>& all) {
  if (s.only.empty()) return all;
  std::vector<Variant> v;
  for (Variant x : all)
    if (std::find(s.only.begin(), s.only.end(), x) != s.only.end()) v.push_back(x);
  return v;
}

/// Device buffers for `world` ranks: inputs and outputs, each max_bytes.
struct Buffers {
  std::vector<void*> in, out;
  Buffers(int world, std::size_t bytes) {
    for (int r = 0; r < world; ++r) {
      void* a = nullptr;
      void* b = nullptr;
      GPU_CHECK(cudaMalloc(&a, bytes));
      GPU_CHECK(cudaMalloc(&b, bytes));
      in.push_back(a);
      out.push_back(b);
    }
  }
  ~Buffers() {
    for (void* p : in) cudaFree(p);
    for (void* p : out) cudaFree(p);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
};

void upload(const Problem& p, const std::vector<void*>& in, const std::vector<void*>& out) {
  for (int r = 0; r < p.world; ++r) {
    GPU_CHECK(cudaMemcpy(in[r], p.in[r].data(), p.bytes(), cudaMemcpyHostToDevice));
    GPU_CHECK(cudaMemset(out[r], kPoison, p.bytes()));
  }
  GPU_CHECK(cudaDeviceSynchronize());  // graph replays run on a stream that ignores the legacy one
}

/// Compares every rank's output with the reference; true when all are bitwise right.
bool verify(Checker& ck, const Problem& p, const std::vector<void*>& out, const std::string& what) {
  std::vector<unsigned char> got(p.bytes());
  bool all = true;
  for (int r = 0; r < p.world; ++r) {
    GPU_CHECK(cudaMemcpy(got.data(), out[r], p.bytes(), cudaMemcpyDeviceToHost));
    const std::size_t wrong = count_wrong(p, got);
    all = ck.expect(wrong == 0, what + " rank " + std::to_string(r) + ": " + std::to_string(wrong) + " of " +
                                    std::to_string(p.count) + " elements wrong") &&
          all;
  }
  return all;
}

std::string label(int world, DType dt, std::size_t count, Variant v) {
  return std::string(name(v)) + " " + name(dt) + " world " + std::to_string(world) + " count " + std::to_string(count);
}

/// Every concrete variant and Auto.
std::vector<Variant> all_variants() {
  std::vector<Variant> v(std::begin(specsim::car_policy::kConcreteVariants),
                         std::end(specsim::car_policy::kConcreteVariants));
  v.push_back(Variant::Auto);
  return v;
}

/// True when `v` refuses a message of `bytes` (the flag-free variants above their cap).
bool over_cap(Variant v, std::size_t bytes) {
  return specsim::car_policy::is_flag_free(v) && bytes > specsim::car_policy::kLlMaxBytes;
}

void sweep(Checker& ck, const Settings& s) {
  const std::vector<int> worlds = s.quick ? std::vector<int>{2, 3, 8} : std::vector<int>{2, 3, 4, 5, 6, 7, 8};
  const std::vector<Variant> variants = selected(s, all_variants());
  Options opt;
  opt.timeout_ns = s.timeout_ns;
  std::uint64_t seed = 1;
  for (int world : worlds) {
    auto comm = Communicator::create_virtual(world, 0, opt);
    Buffers buf(world, opt.max_bytes);
    long cases = 0;
    for (DType dt : {DType::BF16, DType::FP16, DType::FP32}) {
      for (std::size_t count : sweep_counts(dt, s.quick)) {
        const Problem p = make_problem(dt, world, count, seed++);
        for (Variant v : variants) {
          upload(p, buf.in, buf.out);
          const std::string what = label(world, dt, count, v);
          if (over_cap(v, p.bytes())) {
            try {
              comm->allreduce_virtual(buf.in, buf.out, count, dt, v, nullptr);
              ck.expect(false, what + ": accepted above the flag-free cap");
            } catch (const std::runtime_error& e) {
              ck.expect(std::string(e.what()).find("carries") != std::string::npos, what + ": " + e.what());
            }
            continue;
          }
          try {
            comm->allreduce_virtual(buf.in, buf.out, count, dt, v, nullptr);
            comm->synchronize(nullptr);
          } catch (const std::exception& e) {
            ck.expect(false, what + ": threw " + e.what());
            return;
          }
          verify(ck, p, buf.out, what);
          ++cases;
        }
      }
    }
    // inputs full of special bit patterns (the flag-free reserved value among them): every
    // variant, bitwise against the reference
    long specials = 0;
    for (DType dt : {DType::BF16, DType::FP16, DType::FP32}) {
      for (std::size_t count : {std::size_t{3}, std::size_t{1001}, std::size_t{21504}}) {
        const Problem p = make_special_problem(dt, world, count, seed++);
        for (Variant v : variants) {
          upload(p, buf.in, buf.out);
          comm->allreduce_virtual(buf.in, buf.out, count, dt, v, nullptr);
          comm->synchronize(nullptr);
          verify(ck, p, buf.out, "special values " + label(world, dt, count, v));
          ++specials;
        }
      }
    }
    // in place: out == in
    for (Variant v : variants) {
      if (v == Variant::Auto) continue;
      const Problem p = make_problem(DType::BF16, world, 5003, seed++);
      upload(p, buf.in, buf.out);
      comm->allreduce_virtual(buf.in, buf.in, p.count, p.dtype, v, nullptr);
      comm->synchronize(nullptr);
      verify(ck, p, buf.in, "in-place " + label(world, p.dtype, p.count, v));
    }
    std::printf("world %d: %ld cases, %ld with special values, in place checked\n", world, cases, specials);
  }
}

/// Capture one call in a graph; replay it with fresh inputs (copied in before each replay,
/// outputs poisoned) and check every replay.
void graphs(Checker& ck, const Settings& s) {
  const int world = 8;
  Options opt;
  opt.timeout_ns = s.timeout_ns;
  auto comm = Communicator::create_virtual(world, 0, opt);
  Buffers buf(world, opt.max_bytes);
  cudaStream_t st;
  GPU_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  struct G {
    DType dt;
    std::size_t count;
    int reps;
  };
  const int full = s.replays, some = std::max(1, s.replays / 10);
  const G cases[] = {
      {DType::BF16, 21504, full}, {DType::BF16, 10001, some}, {DType::FP16, 28672, some}, {DType::FP32, 4099, some}};
  std::uint64_t seed = 900000;
  const std::vector<Variant> all(std::begin(specsim::car_policy::kConcreteVariants),
                                 std::end(specsim::car_policy::kConcreteVariants));
  for (Variant v : selected(s, all)) {
    for (const G& g : cases) {
      cudaGraph_t graph;
      cudaGraphExec_t exec;
      GPU_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
      comm->allreduce_virtual(buf.in, buf.out, g.count, g.dt, v, st);
      GPU_CHECK(cudaStreamEndCapture(st, &graph));
      GPU_CHECK(cudaGraphInstantiate(&exec, graph, 0));
      long bad = 0;
      for (int k = 0; k < g.reps; ++k) {
        const Problem p = make_problem(g.dt, world, g.count, seed++);
        upload(p, buf.in, buf.out);
        GPU_CHECK(cudaGraphLaunch(exec, st));
        comm->synchronize(st);
        Checker local;
        if (!verify(local, p, buf.out, "graph replay " + std::to_string(k) + " " + label(world, g.dt, g.count, v)))
          ++bad;
      }
      ck.expect(bad == 0, "graph " + label(world, g.dt, g.count, v) + ": " + std::to_string(bad) + " of " +
                              std::to_string(g.reps) + " replays wrong");
      std::printf("graph %s: %d replays, %ld wrong\n", label(world, g.dt, g.count, v).c_str(), g.reps, bad);
      GPU_CHECK(cudaGraphExecDestroy(exec));
      GPU_CHECK(cudaGraphDestroy(graph));
    }
  }
  GPU_CHECK(cudaStreamDestroy(st));
}

/// One graph of many back-to-back calls (variants and sizes mixed, so the flag-free calls meet
/// other variants, both parities and changing block counts), replayed `reps` times with fresh
/// inputs; every call's output checked after every replay.
void chain(Checker& ck, const Settings& s) {
  const int world = 8;
  Options opt;
  opt.timeout_ns = s.timeout_ns;
  opt.max_bytes = 1 << 20;
  auto comm = Communicator::create_virtual(world, 0, opt);
  struct Call {
    Variant v;
    DType dt;
    std::size_t count;
  };
  const Call calls[] = {{Variant::OneShotLL, DType::BF16, 21504},
                        {Variant::OneShotLL, DType::BF16, 7168},
                        {Variant::OneShotLLPull, DType::FP16, 1001},
                        {Variant::OneShotPull, DType::BF16, 21504},
                        {Variant::OneShotLL, DType::FP32, 131072},
                        {Variant::TwoShot, DType::BF16, 57344},
                        {Variant::OneShotLL, DType::BF16, 5},
                        {Variant::OneShotPush, DType::FP32, 999},
                        {Variant::OneShotLLPull, DType::BF16, 21504},
                        {Variant::OneShotLL, DType::FP16, 524288},
                        {Variant::TwoShotLL, DType::BF16, 21504},
                        {Variant::TwoShotLL, DType::FP32, 999},
                        {Variant::OneShotLL, DType::BF16, 3},
                        {Variant::TwoShotLL, DType::FP16, 262144},
                        {Variant::OneShotLLPull, DType::FP32, 4099},
                        {Variant::TwoShotLL, DType::BF16, 7},
                        // one-shot-ll-bcast: 4 calls a replay on 3 slots, so each call meets every slot
                        // across replays, after a longer and a shorter call (leftover emptying)
                        {Variant::OneShotLLBcast, DType::BF16, 21504},
                        {Variant::OneShotLLBcast, DType::FP32, 131072},
                        {Variant::OneShotLLBcast, DType::BF16, 3},
                        {Variant::OneShotLL, DType::BF16, 21504},
                        {Variant::OneShotLLBcast, DType::FP16, 1001}};
  const int n = static_cast<int>(std::size(calls));
  std::vector<std::unique_ptr<Buffers>> bufs;
  for (const Call& c : calls)
    bufs.push_back(std::make_unique<Buffers>(world, c.count * specsim::car::elem_bytes(c.dt)));
  cudaStream_t st;
  GPU_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  GPU_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
  for (int k = 0; k < n; ++k)
    comm->allreduce_virtual(bufs[k]->in, bufs[k]->out, calls[k].count, calls[k].dt, calls[k].v, st);
  GPU_CHECK(cudaStreamEndCapture(st, &graph));
  GPU_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  const int reps = std::max(2, s.replays / 10);
  long bad = 0;
  std::uint64_t seed = 700000;
  for (int r = 0; r < reps; ++r) {
    std::vector<Problem> ps;
    for (int k = 0; k < n; ++k) {
      ps.push_back(r % 3 == 2 ? make_special_problem(calls[k].dt, world, calls[k].count, seed++)
                              : make_problem(calls[k].dt, world, calls[k].count, seed++));
      upload(ps.back(), bufs[k]->in, bufs[k]->out);
    }
    GPU_CHECK(cudaGraphLaunch(exec, st));
    comm->synchronize(st);
    for (int k = 0; k < n; ++k) {
      Checker local;
      if (!verify(local, ps[k], bufs[k]->out, "chain replay " + std::to_string(r) + " call " + std::to_string(k)))
        ++bad;
    }
  }
  ck.expect(bad == 0, "chain graph: " + std::to_string(bad) + " of " + std::to_string(reps * n) + " calls wrong");
  std::printf("chain graph: %d calls x %d replays, %ld wrong\n", n, reps, bad);
  GPU_CHECK(cudaGraphExecDestroy(exec));
  GPU_CHECK(cudaGraphDestroy(graph));
  GPU_CHECK(cudaStreamDestroy(st));
}

/// Expects `f` to throw a runtime_error whose message contains `needle`.
template <typename F>
void expect_throw(Checker& ck, const std::string& what, const std::string& needle, F&& f) {
  try {
    f();
    ck.expect(false, what + ": accepted, expected a refusal");
  } catch (const std::runtime_error& e) {
    ck.expect(std::string(e.what()).find(needle) != std::string::npos,
              what + ": message '" + e.what() + "' lacks '" + needle + "'");
  }
}

/// Refused calls launch nothing: the poisoned output stays poisoned.
void refusals(Checker& ck, const Settings& s) {
  const int world = 4;
  Options opt;
  opt.timeout_ns = s.timeout_ns;
  opt.max_bytes = 2 << 20;  // above the flag-free cap, so that its own refusal shows
  auto comm = Communicator::create_virtual(world, 0, opt);
  Buffers buf(world, opt.max_bytes + 64);
  for (void* p : buf.out) GPU_CHECK(cudaMemset(p, kPoison, opt.max_bytes + 64));
  auto untouched = [&](const std::string& what) {
    GPU_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned char> got(opt.max_bytes + 64);
    for (void* p : buf.out) {
      GPU_CHECK(cudaMemcpy(got.data(), p, got.size(), cudaMemcpyDeviceToHost));
      bool all = true;
      for (unsigned char c : got) all = all && c == kPoison;
      ck.expect(all, what + ": a refused call wrote the output");
    }
  };
  auto shift = [](const std::vector<void*>& v, std::size_t by) {
    std::vector<void*> o;
    for (void* p : v) o.push_back(static_cast<char*>(p) + by);
    return o;
  };
  expect_throw(ck, "misaligned input", "not 16-byte aligned", [&] {
    comm->allreduce_virtual(shift(buf.in, 2), buf.out, 1000, DType::BF16, Variant::OneShotPull, nullptr);
  });
  expect_throw(ck, "misaligned output", "not 16-byte aligned", [&] {
    comm->allreduce_virtual(buf.in, shift(buf.out, 4), 1000, DType::FP32, Variant::TwoShot, nullptr);
  });
  expect_throw(ck, "too large", "exceeds", [&] {
    comm->allreduce_virtual(buf.in, buf.out, (opt.max_bytes / 2) + 1, DType::BF16, Variant::Auto, nullptr);
  });
  expect_throw(ck, "count 0", "count is 0",
               [&] { comm->allreduce_virtual(buf.in, buf.out, 0, DType::BF16, Variant::Auto, nullptr); });
  expect_throw(ck, "flag-free over its cap", "carries", [&] {
    comm->allreduce_virtual(buf.in, buf.out, (specsim::car_policy::kLlMaxBytes / 2) + 8, DType::BF16,
                            Variant::OneShotLL, nullptr);
  });
  expect_throw(ck, "bad variant", "unknown variant",
               [&] { comm->allreduce_virtual(buf.in, buf.out, 64, DType::BF16, static_cast<Variant>(17), nullptr); });
  expect_throw(ck, "fp8", "dtype fp8 is not supported",
               [&] { comm->allreduce_virtual(buf.in, buf.out, 64, DType::FP8, Variant::Auto, nullptr); });
  expect_throw(ck, "wrong number of buffers", "need 4 inputs", [&] {
    std::vector<void*> three(buf.in.begin(), buf.in.begin() + 3);
    comm->allreduce_virtual(three, buf.out, 64, DType::BF16, Variant::Auto, nullptr);
  });
  expect_throw(ck, "per-rank call on virtual", "allreduce_virtual",
               [&] { comm->allreduce(buf.in[0], buf.out[0], 64, DType::BF16, Variant::Auto, nullptr); });
  untouched("refusals");
  expect_throw(ck, "world 9", "outside the supported 2..8", [&] { Communicator::create_virtual(9, 0, opt); });
  expect_throw(ck, "world 1", "outside the supported 2..8", [&] { Communicator::create_virtual(1, 0, opt); });
}

/// World 4 with rank 3 absent: the others must report it within a bounded time, and the
/// communicator must refuse further calls. For a barrier variant and the flag-free ones.
void absent_peer(Checker& ck, const Settings& set) {
  for (Variant v : selected(set, {Variant::OneShotPull, Variant::OneShotLL, Variant::OneShotLLPull, Variant::TwoShotLL,
                                  Variant::OneShotLLBcast})) {
    Options opt;
    opt.timeout_ns = 200'000'000;
    opt.debug_absent_rank = 3;
    const int world = 4;
    auto comm = Communicator::create_virtual(world, 0, opt);
    Buffers buf(world, 1 << 16);
    const Problem p = make_problem(DType::BF16, world, 4096, 4242);
    upload(p, buf.in, buf.out);
    const auto t0 = std::chrono::steady_clock::now();
    std::string msg;
    try {
      comm->allreduce_virtual(buf.in, buf.out, p.count, p.dtype, v, nullptr);
      comm->synchronize(nullptr);
    } catch (const std::runtime_error& e) {
      msg = e.what();
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::string what = std::string("absent peer (") + name(v) + ")";
    std::printf("%s: %.3f s: %s\n", what.c_str(), s, msg.c_str());
    ck.expect(msg.find("rank 3 never arrived") != std::string::npos,
              what + ": expected 'rank 3 never arrived', got '" + msg + "'");
    const char* where = specsim::car_policy::is_flag_free(v) ? "for its data" : "barrier 0";
    ck.expect(msg.find(where) != std::string::npos, what + ": '" + where + "' not named");
    ck.expect(s < 10.0, what + ": took " + std::to_string(s) + " s");
    expect_throw(ck, what + ": call after failure", "unusable",
                 [&] { comm->allreduce_virtual(buf.in, buf.out, p.count, p.dtype, v, nullptr); });
  }
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      s.quick = true;
      s.replays = 20;
    } else if (a == "--timeout-ms" && i + 1 < argc) {
      s.timeout_ns = std::stoull(argv[++i]) * 1'000'000ull;
    } else if (a == "--replays" && i + 1 < argc) {
      s.replays = std::stoi(argv[++i]);
    } else if (a == "--variant" && i + 1 < argc) {
      const auto v = specsim::car::parse_variant(argv[++i]);
      if (!v) {
        std::fprintf(stderr, "error: unknown variant '%s' (--variant)\n", argv[i]);
        return 2;
      }
      s.only.push_back(*v);
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--timeout-ms N] [--replays N] [--variant NAME]...\n", argv[0]);
      return 2;
    }
  }
  devices_or_skip(1, "gpu_car_virtual");
  Checker ck;
  try {
    refusals(ck, s);
    sweep(ck, s);
    graphs(ck, s);
    chain(ck, s);
    absent_peer(ck, s);
  } catch (const std::exception& e) {
    ck.expect(false, std::string("unexpected exception: ") + e.what());
  }
  return ck.finish("gpu_car_virtual");
}
