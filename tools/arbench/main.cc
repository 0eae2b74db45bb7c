// specsim-arbench: all-reduce benchmark in nccl-tests' all_reduce_perf table format, for each
// custom all-reduce variant and for NCCL, eager and in CUDA graphs, every result checked
// against the CPU reference (#wrong). Ranks are virtual (N buffers on one GPU) or real GPUs
// (-g N, one process, one stream per GPU; NCCL runs only there: it refuses two ranks on one GPU).
#include <cuda_runtime.h>
#include <fmt/core.h>
#include <nccl.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "car_reference.h"
#include "cost/bus_bandwidth.h"
#include "cuda_check.h"
#include "custom_allreduce.h"
#include "error_boundary.h"
#include "floors.h"
#include "fused_bench.h"
#include "ranks.h"
#include "util/error.h"

namespace car = specsim::car;
using car::DType;
using car::Variant;
using specsim::arbench::Ranks;
using specsim::arbench::time_calls;

namespace {

/// The custom variants' names, for help and errors.
std::string car_names() { return specsim::car_policy::variant_names(); }

/// nccl-tests size syntax: a number with an optional K, M or G (powers of 1024).
std::size_t parse_size(const std::string& s) {
  std::size_t pos = 0;
  const double v = std::stod(s, &pos);
  std::size_t mul = 1;
  if (pos < s.size()) {
    switch (s[pos]) {
      case 'K':
      case 'k': mul = 1u << 10; break;
      case 'M':
      case 'm': mul = 1u << 20; break;
      case 'G':
      case 'g': mul = 1u << 30; break;
      default: throw specsim::InputError("bad size '" + s + "'", "");
    }
  }
  return static_cast<std::size_t>(v * static_cast<double>(mul));
}

/// NCCL's type for a kernel element type (car::parse_dtype gives no other).
ncclDataType_t nccl_type(DType dt) {
  switch (dt) {
    case DType::BF16: return ncclBfloat16;
    case DType::FP16: return ncclFloat16;
    case DType::FP32: return ncclFloat32;
    default: break;
  }
  throw std::runtime_error("no NCCL type for dtype " + std::string(specsim::dtype_name(dt)));
}

/// One call on every rank; `variant` empty means NCCL.
void enqueue(Ranks& R, const std::optional<Variant>& variant, std::size_t count, DType dt) {
  if (!variant) {
    const ncclDataType_t t = nccl_type(dt);
    GPU_CHECK(ncclGroupStart());
    for (int r = 0; r < R.world; ++r)
      GPU_CHECK(ncclAllReduce(R.in[r], R.out[r], count, t, ncclSum, R.nccl[r], R.st[r]));
    GPU_CHECK(ncclGroupEnd());
    return;
  }
  if (R.virt) {
    R.vcomm->allreduce_virtual(R.in, R.out, count, dt, *variant, R.st[0]);
    return;
  }
  for (int r = 0; r < R.world; ++r) R.comms[r]->allreduce(R.in[r], R.out[r], count, dt, *variant, R.st[r]);
}

struct Row {
  double time_us = 0;
  std::size_t wrong = 0;
};

/// Times `iters` calls (after `warmup`) eagerly or as one captured graph of `iters` calls,
/// then checks the outputs of the last call against the reference.
Row measure(Ranks& R, const std::optional<Variant>& variant, const car::ref::Problem& p, int iters, int warmup,
            bool graph) {
  for (int r = 0; r < R.world; ++r) {
    GPU_CHECK(cudaSetDevice(R.dev[r]));
    GPU_CHECK(cudaMemcpy(R.in[r], p.in[r].data(), p.bytes(), cudaMemcpyHostToDevice));
    GPU_CHECK(cudaMemset(R.out[r], car::ref::kPoison, p.bytes()));
    GPU_CHECK(cudaDeviceSynchronize());  // the ranks' streams do not wait for the legacy stream
  }
  Row row;
  row.time_us = time_calls(
      R, [&] { enqueue(R, variant, p.count, p.dtype); }, iters, warmup, graph);
  std::vector<unsigned char> got(p.bytes());
  for (int r = 0; r < R.world; ++r) {
    GPU_CHECK(cudaSetDevice(R.dev[r]));
    GPU_CHECK(cudaMemcpy(got.data(), R.out[r], p.bytes(), cudaMemcpyDeviceToHost));
    row.wrong += car::ref::count_wrong(p, got);
  }
  GPU_CHECK(cudaSetDevice(R.dev[0]));
  return row;
}

/// Device-to-device copy bandwidth, counting bytes read plus written (GB/s).
double copy_bandwidth_gbps(int device) {
  GPU_CHECK(cudaSetDevice(device));
  const std::size_t bytes = std::size_t{512} << 20;
  void *a = nullptr, *b = nullptr;
  GPU_CHECK(cudaMalloc(&a, bytes));
  GPU_CHECK(cudaMalloc(&b, bytes));
  GPU_CHECK(cudaMemset(a, 1, bytes));
  cudaEvent_t e0, e1;
  GPU_CHECK(cudaEventCreate(&e0));
  GPU_CHECK(cudaEventCreate(&e1));
  GPU_CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
  const int reps = 10;
  GPU_CHECK(cudaEventRecord(e0));
  for (int k = 0; k < reps; ++k)
    GPU_CHECK(cudaMemcpyAsync(k % 2 ? a : b, k % 2 ? b : a, bytes, cudaMemcpyDeviceToDevice));
  GPU_CHECK(cudaEventRecord(e1));
  GPU_CHECK(cudaEventSynchronize(e1));
  float ms = 0;
  GPU_CHECK(cudaEventElapsedTime(&ms, e0, e1));
  GPU_CHECK(cudaEventDestroy(e0));
  GPU_CHECK(cudaEventDestroy(e1));
  GPU_CHECK(cudaFree(a));
  GPU_CHECK(cudaFree(b));
  return specsim::gbps_of(2.0 * static_cast<double>(bytes) * reps, ms * 1e3);
}

struct Args {
  std::string b = "14336", e = "8M", sizes;
  double f = 2;
  std::string step;
  int g = 1, n = 20, w = 5, virtual_ranks = 8;
  std::string
      dtype = "bf16",
      variants =
          "one-shot-ll,one-shot-ll-pull,one-shot-ll-bcast,two-shot-ll,one-shot-pull,one-shot-push,two-shot,auto,"
          "nccl",
      mode = "both";
  double timeout_ms = 2000;
  int ll_threads = 0;
  int floors = 1;
  std::string fused_hidden, tokens = "1,2,4,8,16,32,64", fused_variant = "auto";
};

/// A comma list of positive integers (flag `flag`).
std::vector<std::size_t> parse_list(const std::string& s, const char* flag) {
  std::vector<std::size_t> out;
  for (std::size_t pos = 0; pos <= s.size();) {
    const std::size_t c = s.find(',', pos);
    const std::string item = s.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (...) {
      used = 0;
    }
    if (used != item.size() || item.empty() || v < 1 || v > (1 << 20))
      throw specsim::InputError("'" + item + "' is not a whole number in 1..1048576", flag);
    out.push_back(static_cast<std::size_t>(v));
    if (c == std::string::npos) break;
    pos = c + 1;
  }
  return out;
}

int real_main(int argc, char** argv) {
  Args a;
  CLI::App app{"specsim-arbench: custom all-reduce and NCCL in nccl-tests' all_reduce_perf format"};
  app.add_option("-b,--minbytes", a.b, "smallest size (K/M/G suffixes)");
  app.add_option("-e,--maxbytes", a.e, "largest size");
  app.add_option("-f,--stepfactor", a.f, "multiply the size by this each step");
  app.add_option("-i,--stepbytes", a.step, "add this to the size each step (instead of -f)");
  app.add_option("--sizes", a.sizes, "comma list of sizes, replaces -b/-e/-f/-i");
  app.add_option("-g,--ngpus", a.g, "real GPUs, one rank each (1: use --virtual-ranks)");
  app.add_option("-n,--iters", a.n, "timed iterations");
  app.add_option("-w,--warmup_iters", a.w, "warm-up iterations");
  app.add_option("-d,--datatype", a.dtype, "bf16, fp16 or fp32 (nccl-tests names too)");
  app.add_option("--virtual-ranks", a.virtual_ranks, "ranks on one GPU when -g is 1");
  app.add_option("--variant", a.variants, "comma list of " + car_names() + ", nccl");
  app.add_option("--mode", a.mode, "eager, graph or both");
  app.add_option("--timeout-ms", a.timeout_ms, "bound on every spin in the custom kernels");
  app.add_option("--ll-threads", a.ll_threads, "threads per block of the flag-free kernels: 0 auto, or 32..256");
  app.add_option("--fused-hidden", a.fused_hidden,
                 "comma list of hidden sizes: instead of the variant tables, all-reduce alone vs all-reduce + "
                 "add+RMSNorm vs the fused kernel, at --tokens rows each (bf16/fp16)");
  app.add_option("--tokens", a.tokens, "comma list of rows for --fused-hidden");
  app.add_option("--fused-variant", a.fused_variant,
                 "row split of the fused kernel (and of the separate norm it is compared with): cluster, "
                 "cluster-push, block, split, two-shot or auto (the library's default: split below 8 rows, two-shot "
                 "from 8)");
  app.add_option("--floors", a.floors, "1: measure an empty graph node and, with -g >= 2, a GPU0->GPU1 flag first");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    throw specsim::InputError(e.what(), "run with --help for the flags");
  }

  // Every flag is checked before a GPU is looked for: a typo is exit 2 on any machine.
  const auto dt = car::parse_dtype(a.dtype);
  if (!dt) throw specsim::InputError("unknown datatype '" + a.dtype + "'", "-d");
  if (a.n < 1 || a.n > 1'000'000 || a.w < 0 || a.w > 1'000'000)
    throw specsim::InputError("-n must be in 1..1000000 and -w in 0..1000000", "");
  if (a.mode != "eager" && a.mode != "graph" && a.mode != "both")
    throw specsim::InputError("--mode must be eager, graph or both", "");
  if (!std::isfinite(a.f) || !std::isfinite(a.timeout_ms) || a.timeout_ms <= 0 || a.timeout_ms > 3.6e6)
    throw specsim::InputError("-f and --timeout-ms must be finite (--timeout-ms in (0, 3600000])", "");
  if (a.g < 1 || a.g > 1024) throw specsim::InputError("-g must be in 1..1024", "");
  if (a.virtual_ranks < car::kMinRanks || a.virtual_ranks > car::kMaxRanks)
    throw specsim::InputError(fmt::format("--virtual-ranks must be in {}..{}", car::kMinRanks, car::kMaxRanks), "");
  if (a.ll_threads != 0 && (a.ll_threads < 32 || a.ll_threads > 256 || a.ll_threads % 32 != 0))
    throw specsim::InputError("--ll-threads must be 0 (auto) or a multiple of 32 in 32..256", "");

  const auto fused_variant = car::parse_fused_variant(a.fused_variant);
  if (!fused_variant)
    throw specsim::InputError(
        "unknown fused variant '" + a.fused_variant + "' (cluster, cluster-push, block, split, two-shot, auto)",
        "--fused-variant");
  std::vector<std::size_t> fused_hidden, fused_tokens;
  if (!a.fused_hidden.empty()) {
    fused_hidden = parse_list(a.fused_hidden, "--fused-hidden");
    fused_tokens = parse_list(a.tokens, "--tokens");
    if (*dt == DType::FP32) throw specsim::InputError("the fused kernel runs bf16 and fp16", "-d");
  }
  std::vector<std::size_t> sizes;
  if (!fused_hidden.empty()) {
    for (std::size_t h : fused_hidden)
      for (std::size_t t : fused_tokens) sizes.push_back(h * t * car::elem_bytes(*dt));
  } else if (!a.sizes.empty()) {
    std::size_t pos = 0;
    while (pos <= a.sizes.size()) {
      const std::size_t c = a.sizes.find(',', pos);
      sizes.push_back(parse_size(a.sizes.substr(pos, c == std::string::npos ? std::string::npos : c - pos)));
      if (c == std::string::npos) break;
      pos = c + 1;
    }
  } else {
    const std::size_t lo = parse_size(a.b), hi = parse_size(a.e);
    const std::size_t step = a.step.empty() ? 0 : parse_size(a.step);
    if (step == 0 && a.f <= 1) throw specsim::InputError("-f must be > 1", "");
    for (std::size_t s = lo; s <= hi && sizes.size() < 10000;
         s = step ? s + step : static_cast<std::size_t>(static_cast<double>(s) * a.f))
      sizes.push_back(s);
  }
  const std::size_t eb = car::elem_bytes(*dt);
  std::size_t max_size = 0;
  for (std::size_t& s : sizes) {
    s = std::max(eb, s / eb * eb);
    max_size = std::max(max_size, s);
  }

  std::vector<std::optional<Variant>> runs;  // nullopt = NCCL
  bool want_nccl = false;
  for (std::size_t pos = 0; pos <= a.variants.size();) {
    const std::size_t c = a.variants.find(',', pos);
    const std::string v = a.variants.substr(pos, c == std::string::npos ? std::string::npos : c - pos);
    if (v == "nccl") {
      want_nccl = true;
    } else if (auto pv = car::parse_variant(v)) {
      runs.push_back(*pv);
    } else {
      throw specsim::InputError("unknown variant '" + v + "'", "--variant");
    }
    if (c == std::string::npos) break;
    pos = c + 1;
  }

  // Only now, with every flag checked (sizes and variants too), look for the GPUs.
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::fprintf(stderr, "error: no CUDA device found (specsim-arbench needs a GPU)\n");
    return 2;
  }
  if (a.g > ndev) throw specsim::InputError(fmt::format("-g {} but {} CUDA device(s) found", a.g, ndev), "");

  Ranks R;
  car::Options opt;
  opt.max_bytes = std::max<std::size_t>(max_size, 16);
  opt.timeout_ns = static_cast<std::uint64_t>(a.timeout_ms * 1e6);
  opt.ll_threads = a.ll_threads;
  opt.fused_variant = *fused_variant;
  R.virt = a.g == 1;
  R.world = R.virt ? a.virtual_ranks : a.g;
  cudaDeviceProp prop{};
  GPU_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (R.virt) {
    R.vcomm = car::Communicator::create_virtual(R.world, 0, opt);
    R.dev.assign(static_cast<std::size_t>(R.world), 0);
    R.st.resize(1);
    GPU_CHECK(cudaSetDevice(0));
    GPU_CHECK(cudaStreamCreateWithFlags(&R.st[0], cudaStreamNonBlocking));
  } else {
    for (int d = 0; d < R.world; ++d) R.dev.push_back(d);
    R.comms = car::Communicator::create_single_process(R.dev, opt);
    R.st.resize(static_cast<std::size_t>(R.world));
    for (int d = 0; d < R.world; ++d) {
      GPU_CHECK(cudaSetDevice(d));
      GPU_CHECK(cudaStreamCreateWithFlags(&R.st[d], cudaStreamNonBlocking));
    }
  }
  for (int r = 0; r < R.world; ++r) {
    GPU_CHECK(cudaSetDevice(R.dev[r]));
    void *i = nullptr, *o = nullptr;
    GPU_CHECK(cudaMalloc(&i, opt.max_bytes));
    GPU_CHECK(cudaMalloc(&o, opt.max_bytes));
    R.in.push_back(i);
    R.out.push_back(o);
  }
  if (want_nccl && !R.virt) {
    R.nccl.resize(static_cast<std::size_t>(R.world));
    GPU_CHECK(ncclCommInitAll(R.nccl.data(), R.world, R.dev.data()));
    runs.push_back(std::nullopt);
  }
  const double copy_gbps = copy_bandwidth_gbps(0);
  const car::Link link = R.virt ? R.vcomm->link() : R.comms[0]->link();
  int nccl_version = 0;
  ncclGetVersion(&nccl_version);

  fmt::print("# specsim-arbench: all_reduce_perf-format table; custom all-reduce vs NCCL\n");
  fmt::print("# ranks: {} {} ({}), dtype {}, iters {}, warmup {}, link {}, NCCL {}\n", R.world,
             R.virt ? "virtual ranks on GPU 0" : "GPUs", prop.name, specsim::dtype_name(*dt), a.n, a.w,
             car::to_string(link), nccl_version);
  fmt::print("# copy bandwidth (cudaMemcpy D2D 512 MiB, bytes read + written): {:.1f} GB/s\n", copy_gbps);
  if (a.floors) {
    namespace ab = specsim::arbench;
    fmt::print("# floor: empty kernel node in a CUDA graph (200 nodes, median of 5 replays), us:");
    for (int k = 0; k < ab::kNodeKinds; ++k)
      fmt::print("{} {} {:.2f}", k ? ";" : "", ab::kNodeNames[k], ab::empty_graph_node_us(0, 200, k));
    fmt::print(" (parameter block {} B)\n", ab::node_param_bytes());
    fmt::print("# floor: one read of %globaltimer: {:.0f} SM cycles\n", ab::timer_read_cycles(0, 2000));
    fmt::print("# floor: one dependent 4-byte load, ns (GPU 0's memory):");
    for (int k = 0; k < ab::kLoadKinds; ++k)
      fmt::print(" {} {:.0f}", ab::kLoadNames[k], ab::load_latency_ns(0, 0, k, 2000));
    fmt::print("\n");
    if (R.virt) {
      // the flag-free kernels' traffic alone, with their grid (sizes they take: up to 1 MiB)
      for (const int kind : {0, 1, 2}) {  // copy alone; the traffic, sends to 0, 1, ...; to rank+1, ...
        const bool copy_only = kind == 0, rotated = kind == 2;
        fmt::print("# floor: {}, {} virtual ranks, same grid as one-shot-ll, graph of 200 (PDL), us:",
                   copy_only ? "input -> output copy alone"
                   : rotated ? "one-shot-ll's loads and stores alone (no waiting, no checks, no reduction), sends to "
                               "rank+1, rank+2, ..."
                             : "the same loads and stores, sends to 0, 1, ...",
                   R.world);
        for (const std::size_t s : sizes) {
          const std::size_t bytes = s;
          if (bytes > specsim::car_policy::kLlMaxBytes) continue;
          const int blocks = R.vcomm->blocks_for(bytes, Variant::OneShotLL);
          const int threads = R.vcomm->threads_for(bytes, Variant::OneShotLL);
          fmt::print(" {} {:.2f}", bytes, ab::ll_traffic_us(0, R.world, bytes, blocks, threads, copy_only, rotated));
        }
        fmt::print("\n");
      }
      fmt::print(
          "# floor: one-shot-ll-bcast's loads and stores alone (one copy, peers' copies read, own copy emptied; "
          "no waiting, no checks, no reduction), {} virtual ranks, same grid, graph of 200 (PDL), us:",
          R.world);
      for (const std::size_t bytes : sizes) {
        if (bytes > specsim::car_policy::kLlMaxBytes) continue;
        const int blocks = R.vcomm->blocks_for(bytes, Variant::OneShotLLBcast);
        const int threads = R.vcomm->threads_for(bytes, Variant::OneShotLLBcast);
        fmt::print(" {} {:.2f}", bytes, ab::bcast_traffic_us(0, R.world, bytes, blocks, threads));
      }
      fmt::print("\n");
      // the fused kernel's extra over the all-reduce: its loads and stores, and its row sums, alone
      for (const std::size_t h : fused_hidden)
        for (const std::size_t t : fused_tokens) {
          const int parts = car::fused_cluster(h), threads = car::fused_threads(h);
          if (t * static_cast<std::size_t>(parts) > 64 ||
              t * h * car::elem_bytes(*dt) > specsim::car_policy::kLlMaxBytes) {
            fmt::print("# floor (fused) {} x {}: skipped ({} CTAs a rank over 64, or over the flag-free 1 MiB)\n", h, t,
                       t * static_cast<std::size_t>(parts));
            continue;
          }
          const double ll = ab::fused_traffic_us(0, R.world, h, t, parts, threads, false);
          const double fused = ab::fused_traffic_us(0, R.world, h, t, parts, threads, true);
          double rs[ab::kRowSumKinds];
          for (int k = 0; k < ab::kRowSumKinds; ++k) rs[k] = ab::row_sum_us(0, R.world, t, parts, threads, k);
          fmt::print(
              "# floor (fused) {} x {}: {} CTAs of {} a row, {} virtual ranks, graph of 200 (PDL), us: loads and "
              "stores alone, one-shot-ll's {:.2f}, with the norm's {:.2f} ({:+.2f}); row sums alone, {} {:.2f}, {} "
              "{:.2f} ({:+.2f}), {} {:.2f} ({:+.2f})\n",
              h, t, parts, threads, R.world, ll, fused, fused - ll, ab::kRowSumNames[0], rs[0], ab::kRowSumNames[1],
              rs[1], rs[1] - rs[0], ab::kRowSumNames[2], rs[2], rs[2] - rs[0]);
        }
    } else {
      fmt::print("# floor: one dependent 4-byte load, ns (GPU 1's memory, from GPU 0):");
      for (int k = 0; k < ab::kLoadKinds; ++k)
        fmt::print(" {} {:.0f}", ab::kLoadNames[k], ab::load_latency_ns(0, 1, k, 500));
      fmt::print("\n");
      for (int k : {ab::kLoadRelaxedSys, ab::kLoadVolatile, ab::kLoadRelaxedGpu})
        fmt::print(
            "# floor: flag stored by GPU 0 into GPU 1 (st.relaxed.sys) and seen by a kernel polling it there "
            "({}, 10000 ping-pongs): {:.2f} us one way\n",
            ab::kLoadNames[k], ab::flag_one_way_us(0, 1, 10000, 5.0, k));
    }
  }
  fmt::print("# flag-free kernels: {} threads a block\n",
             a.ll_threads ? std::to_string(a.ll_threads) : std::string("auto (128; 256 above 64 x 128 vectors)"));
  if (want_nccl && R.virt)
    fmt::print(
        "# nccl: skipped: NCCL refuses two ranks on one GPU ('Duplicate GPU detected'); "
        "run with -g N on N >= 2 GPUs\n");
  fmt::print(
      "# time: host clock over {} calls after sync (graph: one graph of {} calls); "
      "busbw = algbw * 2(n-1)/n; #wrong: elements differing bitwise from the CPU reference\n",
      a.n, a.n);

  if (!fused_hidden.empty()) {
    std::size_t wrong = 0;
    for (bool graph : {false, true}) {
      if ((graph && a.mode == "eager") || (!graph && a.mode == "graph")) continue;
      wrong += specsim::arbench::run_fused_bench(R, *dt, fused_hidden, fused_tokens, a.n, a.w, graph);
    }
    fmt::print("# Out of bounds values : {} {}\n", wrong, wrong == 0 ? "OK" : "FAILED");
    for (int r = 0; r < R.world; ++r) {
      cudaSetDevice(R.dev[r]);
      cudaFree(R.in[r]);
      cudaFree(R.out[r]);
    }
    return wrong == 0 ? 0 : 1;
  }

  std::vector<car::ref::Problem> problems;
  for (std::size_t k = 0; k < sizes.size(); ++k)
    problems.push_back(car::ref::make_problem(*dt, R.world, sizes[k] / eb, 1000 + k));

  struct Summary {
    std::string name, mode;
    std::vector<double> us;
  };
  std::vector<Summary> summary;
  std::size_t total_wrong = 0;
  for (const auto& v : runs) {
    for (bool graph : {false, true}) {
      if ((graph && a.mode == "eager") || (!graph && a.mode == "graph")) continue;
      const std::string vname = v ? std::string(car::to_string(*v)) : "nccl";
      fmt::print("#\n# variant: {}   mode: {}\n", vname, graph ? "graph" : "eager");
      fmt::print("#{:>11} {:>13} {:>9} {:>7} {:>7} {:>8} {:>7} {:>7} {:>7}\n", "size", "count", "type", "redop", "root",
                 "time", "algbw", "busbw", "#wrong");
      fmt::print("#{:>11} {:>13} {:>9} {:>7} {:>7} {:>8} {:>7} {:>7} {:>7}\n", "(B)", "(elements)", "", "", "", "(us)",
                 "(GB/s)", "(GB/s)", "");
      Summary sm{vname, graph ? "graph" : "eager", {}};
      std::vector<std::string> notes;
      for (const auto& p : problems) {
        if (v && specsim::car_policy::is_flag_free(*v) && p.bytes() > specsim::car_policy::kLlMaxBytes) {
          fmt::print("{:>12} {:>13} {:>9} {:>7} {:>7} {:>8} {:>7} {:>7} {:>7}\n", p.bytes(), p.count,
                     specsim::dtype_name(p.dtype), "sum", -1, "-", "-", "-", "-");
          notes.push_back(fmt::format("# {} B: not run: {} carries at most {} B", p.bytes(), vname,
                                      specsim::car_policy::kLlMaxBytes));
          sm.us.push_back(0);
          continue;
        }
        const Row row = measure(R, v, p, a.n, a.w, graph);
        total_wrong += row.wrong;
        const double algbw = specsim::gbps_of(static_cast<double>(p.bytes()), row.time_us);
        fmt::print("{:>12} {:>13} {:>9} {:>7} {:>7} {:>8.2f} {:>7.2f} {:>7.2f} {:>7}\n", p.bytes(), p.count,
                   specsim::dtype_name(p.dtype), "sum", -1, row.time_us, algbw,
                   specsim::allreduce_busbw_gbps(algbw, R.world), row.wrong);
        sm.us.push_back(row.time_us);
        if (v && R.virt && p.bytes() >= (std::size_t{1} << 20)) {
          const Variant rv = R.vcomm->resolve(*v, p.bytes());
          const double moved = car::moved_bytes_per_rank(rv, p.bytes(), R.world) * R.world;
          const double gbps = specsim::gbps_of(moved, row.time_us);
          notes.push_back(fmt::format(
              "# {} B ({}): {} ranks move {:.1f} MB in {:.2f} us = {:.1f} GB/s = {:.0f}% of copy bandwidth", p.bytes(),
              car::to_string(rv), R.world, moved / 1e6, row.time_us, gbps, 100.0 * gbps / copy_gbps));
        }
      }
      for (const auto& n : notes) fmt::print("{}\n", n);
      summary.push_back(std::move(sm));
    }
  }
  fmt::print("#\n# summary: time (us) per call\n# {:>16} {:>6}", "variant", "mode");
  for (std::size_t s : sizes) fmt::print(" {:>10}", s);
  fmt::print("\n");
  for (const auto& s : summary) {
    fmt::print("# {:>16} {:>6}", s.name, s.mode);
    for (double t : s.us) fmt::print(" {:>10}", t > 0 ? fmt::format("{:.2f}", t) : std::string("-"));
    fmt::print("\n");
  }
  // NCCL's time over each variant's, same mode and size (how many times faster than NCCL)
  for (const auto& n : summary) {
    if (n.name != "nccl") continue;
    fmt::print("# speed-up over nccl ({}):\n", n.mode);
    for (const auto& s : summary) {
      if (s.name == "nccl" || s.mode != n.mode) continue;
      fmt::print("# {:>16} {:>6}", s.name, s.mode);
      for (std::size_t k = 0; k < s.us.size(); ++k)
        fmt::print(" {:>10}", s.us[k] > 0 ? fmt::format("{:.2f}x", n.us[k] / s.us[k]) : std::string("-"));
      fmt::print("\n");
    }
  }
  fmt::print("# Out of bounds values : {} {}\n", total_wrong, total_wrong == 0 ? "OK" : "FAILED");

  for (auto c : R.nccl) ncclCommDestroy(c);
  for (int r = 0; r < R.world; ++r) {
    cudaSetDevice(R.dev[r]);
    cudaFree(R.in[r]);
    cudaFree(R.out[r]);
  }
  return total_wrong == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // NCCL reads this when it starts (-g N with nccl): never NVLink SHARP (multicast).
  ::setenv("NCCL_NVLS_ENABLE", "0", 1);
  return specsim::cli::error_boundary([&] { return real_main(argc, argv); });
}
