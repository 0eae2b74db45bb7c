// The fused all-reduce + residual add + RMSNorm on virtual ranks of one GPU, against the CPU
// reference (car_fused_reference.h): the new residual bitwise, the norm within 2 ulps, every rank's
// outputs bitwise equal, and bitwise equal to a plain all-reduce followed by the separate
// add+RMSNorm kernel; the fp8 copy bitwise equal to the host's e4m3 of the norm output. Also in
// place, a CUDA graph of fused calls mixed with one-shot-ll calls (they share the slots and the
// call count), an absent rank (bounded wait, error reported), and the host refusals (these run
// first, without a GPU). Every fused variant (Options::fused_variant) writes the same bits as the
// others and as the separate kernel, and `auto`'s calls of split and two-shot alternate on one
// communicator. Flags: --quick (fewer worlds and shapes), --timeout-ms N,
// --variant NAME (one variant; default every one).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "car_fused_test_util.h"

namespace car = specsim::car;
using namespace cartest;

namespace {

void host_refusals(Checker& ck) {
  alignas(16) static unsigned char buf[6][4096];
  car::FusedNormIo io{buf[0], buf[1], buf[2], buf[3], buf[4], nullptr};
  car::FusedNormShape s;
  s.tokens = 4;
  s.hidden = 256;
  const std::size_t mb = std::size_t{8} << 20;
  ck.expect(!car::fused_refuse_reason(io, s, 4, mb), "a valid fused call is accepted");
  auto refused = [&](car::FusedNormIo i, car::FusedNormShape sh, int world, const char* what) {
    ck.expect(car::fused_refuse_reason(i, sh, world, mb).has_value(), std::string("refused: ") + what);
  };
  refused(io, s, 1, "world 1");
  refused(io, s, 9, "world 9");
  car::FusedNormShape t = s;
  t.dtype = DType::FP32;
  refused(io, t, 4, "fp32");
  t = s, t.tokens = 0;
  refused(io, t, 4, "tokens 0");
  t = s, t.hidden = 12;
  refused(io, t, 4, "hidden not a multiple of 8");
  t = s, t.hidden = car::kFusedMaxHidden + 8;
  refused(io, t, 4, "hidden over the cap");
  t = s, t.tokens = 65, t.hidden = 8192;
  refused(io, t, 4, "over the flag-free 1 MiB");
  t = s, t.eps = -1;
  refused(io, t, 4, "negative eps");
  car::FusedNormIo j = io;
  j.quant_out = buf[5];
  t = s, t.quant_scale = 0;
  refused(j, t, 4, "quant scale 0");
  j = io, j.weight = nullptr;
  refused(j, s, 4, "null weight");
  j = io, j.norm_out = buf[0] + 8;
  refused(j, s, 4, "misaligned norm_out");
  j = io, j.residual_out = buf[0];
  refused(j, s, 4, "residual_out over in");
  j = io, j.norm_out = buf[1];
  refused(j, s, 4, "norm_out over residual_in");
  j = io, j.norm_out = buf[0], j.residual_out = buf[1];
  ck.expect(!car::fused_refuse_reason(j, s, 4, mb), "in place (norm_out == in, residual_out == residual_in)");
  ck.expect(car::fused_cluster(24) == 1 && car::fused_cluster(1024) == 1 && car::fused_cluster(1032) == 2 &&
                car::fused_cluster(4096) == 4 && car::fused_cluster(7168) == 8 && car::fused_cluster(8192) == 8 &&
                car::fused_cluster(16384) == 8,
            "CTAs a row: the fewest of 1, 2, 4, 8 that leave a CTA at most 128 vectors");
  ck.expect(car::fused_threads(24) == 32 && car::fused_threads(1032) == 96 && car::fused_threads(4096) == 128 &&
                car::fused_threads(7168) == 128 && car::fused_threads(8192) == 128 && car::fused_threads(16384) == 256,
            "threads: a CTA's slice of the row, a vector a thread, whole warps");
  for (car::FusedVariant v : kFusedVariants)
    ck.expect(car::parse_fused_variant(car::to_string(v)) == v, "fused variant name round trip");
  ck.expect(!car::parse_fused_variant("clusters") && !car::parse_fused_variant(""), "unknown fused variant names");
  ck.expect(car::fused_cta_threads(car::FusedVariant::Block, 7168) == 1024 &&
                car::fused_cta_threads(car::FusedVariant::Block, 4096) == 512 &&
                car::fused_cta_threads(car::FusedVariant::Split, 7168) == 128 &&
                car::fused_cta_threads(car::FusedVariant::TwoShot, 7168) == 128 &&
                car::fused_cta_threads(car::FusedVariant::Cluster, 16384) == 256,
            "threads a CTA: block puts the row's slices side by side in one CTA");
  ck.expect(!car::fused_variant_refuse_reason(car::FusedVariant::Block, 8192) &&
                car::fused_variant_refuse_reason(car::FusedVariant::Block, 8200).has_value() &&
                !car::fused_variant_refuse_reason(car::FusedVariant::Split, 16384) &&
                !car::fused_variant_refuse_reason(car::FusedVariant::ClusterPush, 16384),
            "block refuses rows needing more than 1024 threads; the others run every hidden size");
  ck.expect(car::resolve_fused_variant(car::FusedVariant::Auto, car::kFusedTwoShotMinTokens - 1) ==
                    car::FusedVariant::Split &&
                car::resolve_fused_variant(car::FusedVariant::Auto, car::kFusedTwoShotMinTokens) ==
                    car::FusedVariant::TwoShot &&
                car::resolve_fused_variant(car::FusedVariant::Cluster, 64) == car::FusedVariant::Cluster &&
                car::Options{}.fused_variant == car::FusedVariant::Auto,
            "auto: split below kFusedTwoShotMinTokens rows, two-shot from there; the default");
  ck.expect(to_e4m3(1.0f) == 0x38 && to_e4m3(-448.0f) == 0xfe && to_e4m3(1e6f) == 0x7e && to_e4m3(0.0f) == 0,
            "host e4m3 reference");
}

/// One shape on `world` virtual ranks: fused (optionally in place), the unfused pair, compared.
void run_case(Checker& ck, car::FusedVariant variant, int world, DType dt, std::size_t tokens, std::size_t hidden,
              bool in_place, bool quant, std::uint64_t timeout_ns) {
  const std::string shape_tag = "world " + std::to_string(world) + " " + name(dt) + " " + std::to_string(tokens) + "x" +
                                std::to_string(hidden) + (in_place ? " in place" : "") + (quant ? " fp8" : "");
  const std::string tag = std::string(car::to_string(variant)) + " " + shape_tag;
  // progress on stderr (unbuffered): a run cut short by a timeout shows the case it was in
  std::fprintf(stderr, "case %s\n", tag.c_str());
  const FusedProblem p = make_fused_problem(dt, world, tokens, hidden, 17 + tokens * 31 + hidden + world);
  const std::size_t bytes = tokens * hidden * 2;
  car::Options opt;
  opt.max_bytes = bytes;
  opt.timeout_ns = timeout_ns;
  opt.fused_variant = variant;
  auto comm = car::Communicator::create_virtual(world, 0, opt);
  std::vector<RankBufs> b(static_cast<std::size_t>(world));
  std::vector<car::FusedNormIo> fio(b.size()), nio(b.size());
  std::vector<const void*> ar_in;
  std::vector<void*> ar_out;
  car::FusedNormShape s;
  s.tokens = tokens, s.hidden = hidden, s.dtype = dt, s.eps = p.eps, s.quant_scale = 0.05f;
  for (int r = 0; r < world; ++r) {
    RankBufs& x = b[static_cast<std::size_t>(r)];
    x.alloc(bytes, hidden * 2);
    GPU_CHECK(cudaMemcpy(x.in, p.ar.in[static_cast<std::size_t>(r)].data(), bytes, cudaMemcpyHostToDevice));
    GPU_CHECK(cudaMemcpy(x.res_in, p.residual.data(), bytes, cudaMemcpyHostToDevice));
    GPU_CHECK(cudaMemcpy(x.weight, p.weight.data(), hidden * 2, cudaMemcpyHostToDevice));
    for (void* o : {x.res_out, x.norm, x.norm2, x.res2, x.ar}) GPU_CHECK(cudaMemset(o, kPoison, bytes));
    GPU_CHECK(cudaMemset(x.quant, 0x55, bytes / 2));
    GPU_CHECK(cudaMemset(x.quant2, 0x66, bytes / 2));
    fio[r] = {
        x.in, x.res_in, in_place ? x.res_in : x.res_out, x.weight, in_place ? x.in : x.norm, quant ? x.quant : nullptr};
    ar_in.push_back(x.in);
    ar_out.push_back(x.ar);
    nio[r] = {x.ar, x.res_in, x.res2, x.weight, x.norm2, quant ? x.quant2 : nullptr};
  }
  // the unfused pair first (in place would overwrite the inputs it reads)
  comm->allreduce_virtual(ar_in, ar_out, tokens * hidden, dt, car::Variant::OneShotLL, nullptr);
  car::add_rmsnorm(nio, s, nullptr, separate_for(variant, hidden));
  comm->synchronize(nullptr);
  if (auto why = car::fused_variant_refuse_reason(variant, hidden)) {
    bool refused = false;
    try {
      comm->allreduce_add_rmsnorm_virtual(fio, s, nullptr);
    } catch (const std::runtime_error& e) {
      refused = std::string(e.what()).find("refused") != std::string::npos;
    }
    ck.expect(refused, tag + ": refused before launch (" + *why + ")");
    for (auto& x : b) x.free_all();
    return;
  }
  comm->allreduce_add_rmsnorm_virtual(fio, s, nullptr);
  comm->synchronize(nullptr);

  std::vector<unsigned char> norm0;
  for (int r = 0; r < world; ++r) {
    const RankBufs& x = b[static_cast<std::size_t>(r)];
    const auto res = fetch(fio[r].residual_out, bytes), norm = fetch(fio[r].norm_out, bytes);
    const auto res2 = fetch(x.res2, bytes), norm2 = fetch(x.norm2, bytes);
    const std::vector<unsigned char> q = quant ? fetch(x.quant, bytes / 2) : std::vector<unsigned char>{};
    const std::vector<unsigned char> q2 = quant ? fetch(x.quant2, bytes / 2) : std::vector<unsigned char>{};
    check_fused_rank(ck, tag + ": rank " + std::to_string(r), p, dt, s.quant_scale, res, res2, norm, norm2,
                     quant ? &q : nullptr, quant ? &q2 : nullptr);
    if (r == 0) norm0 = norm;
    ck.expect(norm == norm0, tag + ": rank " + std::to_string(r) + " norm bitwise = rank 0's");
    // every variant's norm of this shape bitwise equal to the first variant's that ran it
    static std::map<std::string, std::vector<unsigned char>> first_norm;
    if (r == 0 && !first_norm.count(shape_tag)) first_norm[shape_tag] = norm;
    ck.expect(norm == first_norm[shape_tag],
              tag + ": rank " + std::to_string(r) + " norm bitwise = the other variants'");
  }
  for (auto& x : b) x.free_all();
}

/// A graph of fused calls between one-shot-ll calls, replayed: every replay's outputs right.
void graph_case(Checker& ck, car::FusedVariant variant, int world, std::uint64_t timeout_ns) {
  const DType dt = DType::BF16;
  const std::size_t tokens = 4, hidden = 7168, bytes = tokens * hidden * 2;
  const FusedProblem p = make_fused_problem(dt, world, tokens, hidden, 4242 + world);
  car::Options opt;
  opt.max_bytes = bytes;
  opt.timeout_ns = timeout_ns;
  opt.fused_variant = variant;
  auto comm = car::Communicator::create_virtual(world, 0, opt);
  std::vector<RankBufs> b(static_cast<std::size_t>(world));
  std::vector<car::FusedNormIo> fio(b.size());
  std::vector<const void*> ar_in;
  std::vector<void*> ar_out;
  car::FusedNormShape s;
  s.tokens = tokens, s.hidden = hidden, s.dtype = dt, s.eps = p.eps;
  for (int r = 0; r < world; ++r) {
    RankBufs& x = b[static_cast<std::size_t>(r)];
    x.alloc(bytes, hidden * 2);
    GPU_CHECK(cudaMemcpy(x.in, p.ar.in[static_cast<std::size_t>(r)].data(), bytes, cudaMemcpyHostToDevice));
    GPU_CHECK(cudaMemcpy(x.res_in, p.residual.data(), bytes, cudaMemcpyHostToDevice));
    GPU_CHECK(cudaMemcpy(x.weight, p.weight.data(), hidden * 2, cudaMemcpyHostToDevice));
    fio[r] = {x.in, x.res_in, x.res_out, x.weight, x.norm, nullptr};
    ar_in.push_back(x.in);
    ar_out.push_back(x.ar);
  }
  cudaStream_t st;
  GPU_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaGraph_t g;
  cudaGraphExec_t ge;
  GPU_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  for (int k = 0; k < 3; ++k) {  // fused, one-shot-ll, fused, ...: odd and even parities for both
    comm->allreduce_add_rmsnorm_virtual(fio, s, st);
    comm->allreduce_virtual(ar_in, ar_out, tokens * hidden, dt, car::Variant::OneShotLL, st);
  }
  GPU_CHECK(cudaStreamEndCapture(st, &g));
  GPU_CHECK(cudaGraphInstantiate(&ge, g, 0));
  for (int rep = 0; rep < 5; ++rep) {
    for (auto& x : b)
      for (void* o : {x.norm, x.res_out, x.ar}) GPU_CHECK(cudaMemset(o, kPoison, bytes));
    GPU_CHECK(cudaDeviceSynchronize());
    GPU_CHECK(cudaGraphLaunch(ge, st));
    comm->synchronize(st);
    std::vector<unsigned char> norm0;
    for (int r = 0; r < world; ++r) {
      const auto norm = fetch(b[static_cast<std::size_t>(r)].norm, bytes);
      const auto res = fetch(b[static_cast<std::size_t>(r)].res_out, bytes);
      const auto ar = fetch(b[static_cast<std::size_t>(r)].ar, bytes);
      if (r == 0) norm0 = norm;
      const std::string tag = std::string(car::to_string(variant)) + " graph world " + std::to_string(world) +
                              " replay " + std::to_string(rep) + " rank " + std::to_string(r);
      ck.expect(res == p.new_residual && norm == norm0, tag + ": fused outputs");
      ck.expect(ar == p.ar.ref, tag + ": one-shot-ll between fused calls");
    }
  }
  GPU_CHECK(cudaGraphExecDestroy(ge));
  GPU_CHECK(cudaGraphDestroy(g));
  GPU_CHECK(cudaStreamDestroy(st));
  for (auto& x : b) x.free_all();
}

/// auto on both sides of its threshold: the launch runs the variant it resolves to, with its outputs.
void auto_cases(Checker& ck, std::uint64_t timeout_ns) {
  car::Options opt;
  opt.max_bytes = 64 * 7168 * 2;
  auto comm = car::Communicator::create_virtual(8, 0, opt);
  for (std::size_t tokens : {car::kFusedTwoShotMinTokens - 1, car::kFusedTwoShotMinTokens}) {
    car::FusedNormShape s;
    s.tokens = tokens, s.hidden = 7168, s.dtype = DType::BF16;
    const car::FusedVariant want =
        tokens < car::kFusedTwoShotMinTokens ? car::FusedVariant::Split : car::FusedVariant::TwoShot;
    ck.expect(comm->fused_geometry(s).variant == want,
              "auto at " + std::to_string(tokens) + " rows launches " + std::string(car::to_string(want)));
    run_case(ck, car::FusedVariant::Auto, 8, DType::BF16, tokens, 7168, false, true, timeout_ns);
  }
}

/// auto's pattern across batch sizes, on one communicator: fused calls below the two-shot threshold
/// (split) and at it (two-shot) alternating with each other and with a one-shot-ll call, enqueued
/// back to back and then as a graph replayed. Every call has its own inputs and outputs, and the
/// graph's replays alternate two input sets, so a call that read a slot left by an earlier call
/// (the slots and call counts the variants share) writes wrong bits.
void alternating_case(Checker& ck, int world, std::uint64_t timeout_ns) {
  const DType dt = DType::BF16;
  const std::size_t hidden = 7168;
  const std::size_t rows[2] = {car::kFusedTwoShotMinTokens - 1, car::kFusedTwoShotMinTokens};
  car::Options opt;
  opt.max_bytes = rows[1] * hidden * 2;
  opt.timeout_ns = timeout_ns;
  auto comm = car::Communicator::create_virtual(world, 0, opt);
  const std::string who = "auto alternating world " + std::to_string(world);
  std::fprintf(stderr, "case %s\n", who.c_str());
  car::FusedNormShape s[2];
  for (int k = 0; k < 2; ++k) {
    s[k].tokens = rows[k], s[k].hidden = hidden, s[k].dtype = dt;
    const car::FusedVariant v = comm->fused_geometry(s[k]).variant;
    ck.expect(v == (k == 0 ? car::FusedVariant::Split : car::FusedVariant::TwoShot),
              who + ": " + std::to_string(rows[k]) + " rows run " + std::string(car::to_string(v)));
  }
  // two-shot, split, one-shot-ll, split, two-shot, two-shot, split: both parities after each switch
  const int seq[] = {1, 0, -1, 0, 1, 1, 0};
  const std::size_t ncalls = std::size(seq);
  auto kind = [&](std::size_t c) { return seq[c] < 0 ? 0 : seq[c]; };
  auto bytes_of = [&](std::size_t c) { return rows[kind(c)] * hidden * 2; };
  // every call's buffers (its outputs its own) and, per input set, its problem and the unfused
  // pair's outputs (the bits every fused call must match)
  std::vector<std::vector<RankBufs>> calls(ncalls);
  std::vector<FusedProblem> prob[2];
  std::vector<std::vector<std::vector<unsigned char>>> res2[2], norm2[2];  // [set][call][rank]
  auto load = [&](std::size_t c, const FusedProblem& p) {
    for (int r = 0; r < world; ++r) {
      RankBufs& x = calls[c][static_cast<std::size_t>(r)];
      GPU_CHECK(cudaMemcpy(x.in, p.ar.in[static_cast<std::size_t>(r)].data(), bytes_of(c), cudaMemcpyHostToDevice));
      GPU_CHECK(cudaMemcpy(x.res_in, p.residual.data(), bytes_of(c), cudaMemcpyHostToDevice));
      GPU_CHECK(cudaMemcpy(x.weight, p.weight.data(), hidden * 2, cudaMemcpyHostToDevice));
    }
  };
  for (std::size_t c = 0; c < ncalls; ++c) {
    calls[c].resize(static_cast<std::size_t>(world));
    for (RankBufs& x : calls[c]) x.alloc(bytes_of(c), hidden * 2);
  }
  for (int set = 0; set < 2; ++set)
    for (std::size_t c = 0; c < ncalls; ++c) {
      prob[set].push_back(make_fused_problem(dt, world, rows[kind(c)], hidden, 777 + 31 * c + 7 * set + world));
      s[kind(c)].eps = prob[set].back().eps;
      if (seq[c] < 0) {  // the one-shot-ll call: its reference is the problem's sum
        res2[set].emplace_back(), norm2[set].emplace_back();
        continue;
      }
      load(c, prob[set].back());
      std::vector<const void*> in;
      std::vector<void*> out;
      std::vector<car::FusedNormIo> nio;
      for (RankBufs& x : calls[c]) {
        in.push_back(x.in), out.push_back(x.ar);
        nio.push_back({x.ar, x.res_in, x.res2, x.weight, x.norm2, nullptr});
      }
      comm->allreduce_virtual(in, out, rows[kind(c)] * hidden, dt, car::Variant::OneShotLL, nullptr);
      car::add_rmsnorm(nio, s[kind(c)], nullptr,
                       separate_for(kind(c) == 0 ? car::FusedVariant::Split : car::FusedVariant::TwoShot, hidden));
      comm->synchronize(nullptr);
      res2[set].emplace_back(), norm2[set].emplace_back();
      for (const RankBufs& x : calls[c]) {
        res2[set].back().push_back(fetch(x.res2, bytes_of(c)));
        norm2[set].back().push_back(fetch(x.norm2, bytes_of(c)));
      }
    }
  auto enqueue = [&](cudaStream_t st) {
    for (std::size_t c = 0; c < ncalls; ++c) {
      if (seq[c] < 0) {
        std::vector<const void*> in;
        std::vector<void*> out;
        for (RankBufs& x : calls[c]) in.push_back(x.in), out.push_back(x.ar);
        comm->allreduce_virtual(in, out, rows[0] * hidden, dt, car::Variant::OneShotLL, st);
      } else {
        std::vector<car::FusedNormIo> fio;
        for (RankBufs& x : calls[c]) fio.push_back({x.in, x.res_in, x.res_out, x.weight, x.norm, nullptr});
        comm->allreduce_add_rmsnorm_virtual(fio, s[seq[c]], st);
      }
    }
  };
  // inputs of set `set` in, outputs poisoned
  auto prepare = [&](int set) {
    for (std::size_t c = 0; c < ncalls; ++c) {
      load(c, prob[set][c]);
      for (RankBufs& x : calls[c])
        for (void* o : {x.norm, x.res_out, x.ar}) GPU_CHECK(cudaMemset(o, kPoison, bytes_of(c)));
    }
    GPU_CHECK(cudaDeviceSynchronize());
  };
  auto check = [&](int set, const std::string& when) {
    for (std::size_t c = 0; c < ncalls; ++c)
      for (int r = 0; r < world; ++r) {
        const RankBufs& x = calls[c][static_cast<std::size_t>(r)];
        const FusedProblem& p = prob[set][c];
        const std::string tag = who + " " + when + " call " + std::to_string(c) + " rank " + std::to_string(r);
        if (seq[c] < 0) {
          ck.expect(fetch(x.ar, bytes_of(c)) == p.ar.ref, tag + ": one-shot-ll between fused calls");
          continue;
        }
        check_fused_rank(ck, tag, p, dt, 1.0f, fetch(x.res_out, bytes_of(c)), res2[set][c][static_cast<std::size_t>(r)],
                         fetch(x.norm, bytes_of(c)), norm2[set][c][static_cast<std::size_t>(r)], nullptr, nullptr);
      }
  };
  prepare(0);
  enqueue(nullptr);
  comm->synchronize(nullptr);
  check(0, "eager");
  cudaStream_t st;
  GPU_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaGraph_t g;
  cudaGraphExec_t ge;
  GPU_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  enqueue(st);
  GPU_CHECK(cudaStreamEndCapture(st, &g));
  GPU_CHECK(cudaGraphInstantiate(&ge, g, 0));
  for (int rep = 0; rep < 4; ++rep) {
    const int set = (rep + 1) % 2;  // the first replay follows the eager calls with the other inputs
    prepare(set);
    GPU_CHECK(cudaGraphLaunch(ge, st));
    comm->synchronize(st);
    check(set, "graph replay " + std::to_string(rep));
  }
  GPU_CHECK(cudaGraphExecDestroy(ge));
  GPU_CHECK(cudaGraphDestroy(g));
  GPU_CHECK(cudaStreamDestroy(st));
  for (auto& b : calls)
    for (auto& x : b) x.free_all();
}

/// A rank that never arrives: the call ends within the bound and says who was missing (and, where
/// given, `also`: what another rank's message says).
void absent_case(Checker& ck, car::FusedVariant variant, int world, std::size_t hidden = 4096,
                 const std::string& also = "") {
  const std::size_t tokens = 2, bytes = tokens * hidden * 2;
  car::Options opt;
  opt.fused_variant = variant;
  opt.max_bytes = bytes;
  opt.timeout_ns = 50'000'000;
  opt.debug_absent_rank = world - 1;
  auto comm = car::Communicator::create_virtual(world, 0, opt);
  std::vector<RankBufs> b(static_cast<std::size_t>(world));
  std::vector<car::FusedNormIo> fio(b.size());
  for (int r = 0; r < world; ++r) {
    b[r].alloc(bytes, hidden * 2);
    GPU_CHECK(cudaMemset(b[r].in, 0, bytes));
    GPU_CHECK(cudaMemset(b[r].res_in, 0, bytes));
    GPU_CHECK(cudaMemset(b[r].weight, 0, hidden * 2));
    fio[r] = {b[r].in, b[r].res_in, b[r].res_out, b[r].weight, b[r].norm, nullptr};
  }
  car::FusedNormShape s;
  s.tokens = tokens, s.hidden = hidden;
  comm->allreduce_add_rmsnorm_virtual(fio, s, nullptr);
  std::string msg;
  try {
    comm->synchronize(nullptr);
  } catch (const std::runtime_error& e) {
    msg = e.what();
  }
  ck.expect(msg.find("rank " + std::to_string(world - 1) + " never arrived") != std::string::npos,
            std::string(car::to_string(variant)) + ": absent rank reported: '" + msg + "'");
  if (!also.empty())
    ck.expect(msg.find(also) != std::string::npos,
              std::string(car::to_string(variant)) + ": '" + also + "' in '" + msg + "'");
  bool refused = false;
  try {
    comm->allreduce_add_rmsnorm_virtual(fio, s, nullptr);
  } catch (const std::runtime_error&) {
    refused = true;
  }
  ck.expect(refused, "a failed communicator refuses further fused calls");
  for (auto& x : b) x.free_all();
}

int run(int argc, char** argv) {
  bool quick = false, sanitize = false;
  std::uint64_t timeout_ns = 2'000'000'000;
  std::vector<car::FusedVariant> variants(std::begin(kFusedVariants), std::end(kFusedVariants));
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      quick = true;
    } else if (a == "--sanitize") {  // the fewest cases that reach every code path (compute-sanitizer)
      quick = sanitize = true;
    } else if (a == "--timeout-ms" && i + 1 < argc) {
      timeout_ns = static_cast<std::uint64_t>(std::stod(argv[++i]) * 1e6);
    } else if (a == "--variant" && i + 1 < argc && car::parse_fused_variant(argv[i + 1])) {
      variants = {*car::parse_fused_variant(argv[++i])};
    } else {
      std::fprintf(stderr,
                   "error: usage: gpu_car_fused [--quick | --sanitize] [--timeout-ms N] [--variant "
                   "cluster|cluster-push|block|split|two-shot|auto]\n");
      return 2;
    }
  }
  Checker ck;
  host_refusals(ck);
  if (ck.failures != 0) return ck.finish("gpu_car_fused");
  devices_or_skip(1, "gpu_car_fused");
  GPU_CHECK(cudaSetDevice(0));
  const std::vector<int> worlds = sanitize ? std::vector<int>{8}
                                  : quick  ? std::vector<int>{2, 8}
                                           : std::vector<int>{2, 3, 4, 5, 6, 7, 8};
  struct Shape {
    std::size_t tokens, hidden;
  };
  const std::vector<Shape> shapes =
      sanitize ? std::vector<Shape>{{3, 7168}, {64, 8192}}
      : quick  ? std::vector<Shape>{{1, 7168}, {3, 4096}, {64, 8192}, {2, 8200}}
               : std::vector<Shape>{{1, 4096},  {1, 7168}, {2, 8192}, {5, 7168},  {16, 4096}, {33, 8192}, {64, 8192},
                                    {3, 16384}, {7, 24},   {9, 1000}, {64, 7168}, {2, 1032},  {4, 4104}};
  for (car::FusedVariant v : variants) {
    for (int world : worlds)
      for (DType dt : {DType::BF16, DType::FP16})
        for (const Shape& sh : shapes) {
          if ((quick && dt == DType::FP16 && sh.tokens != 3) || (sanitize && dt == DType::FP16)) continue;
          run_case(ck, v, world, dt, sh.tokens, sh.hidden, false, sh.tokens % 2 == 1, timeout_ns);
        }
    for (int world : worlds) run_case(ck, v, world, DType::BF16, 5, 7168, true, true, timeout_ns);
    for (int world : quick ? std::vector<int>{8} : std::vector<int>{2, 4, 8}) graph_case(ck, v, world, timeout_ns);
    absent_case(ck, v, quick ? 2 : 4);
    // two-shot with ranks that own no slice (world 4, hidden 2048: 2 slices, owned by ranks 0 and 1):
    // the absent rank 3 is named by the owners; rank 2, waiting on an owner, says that owner never
    // sent the slice's values
    if (v == car::FusedVariant::TwoShot)
      absent_case(ck, v, 4, 2048, "rank 2 waited 0.100 s for a slice's reduced values");
  }
  if (variants.size() > 1 || variants[0] == car::FusedVariant::Auto) {
    auto_cases(ck, timeout_ns);
    for (int world : quick ? std::vector<int>{8} : std::vector<int>{2, 3, 8}) alternating_case(ck, world, timeout_ns);
  }
  return ck.finish("gpu_car_fused");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL: %s\n", e.what());
    return 1;
  }
}
