// specsim-arbench --fused-hidden: all-reduce alone, all-reduce + add+RMSNorm, fused (fused_bench.h).
#include "fused_bench.h"

#include <fmt/core.h>

#include <cstring>
#include <span>
#include <string>

#include "car_fused_reference.h"

namespace specsim::arbench {

namespace {

/// A rank's buffers besides R.in (input) and R.out (the plain all-reduce's output).
struct FusedBufs {
  void *res_in = nullptr, *res_out = nullptr, *weight = nullptr, *norm = nullptr, *res2 = nullptr, *norm2 = nullptr;
};

std::vector<unsigned char> fetch(int dev, const void* d, std::size_t bytes) {
  std::vector<unsigned char> h(bytes);
  GPU_CHECK(cudaSetDevice(dev));
  GPU_CHECK(cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost));
  return h;
}

}  // namespace

std::size_t run_fused_bench(Ranks& R, DType dt, const std::vector<std::size_t>& hiddens,
                            const std::vector<std::size_t>& tokens, int iters, int warmup, bool graph) {
  std::size_t max_bytes = 0, max_hidden = 0;
  for (std::size_t h : hiddens)
    for (std::size_t t : tokens) max_bytes = std::max(max_bytes, t * h * 2), max_hidden = std::max(max_hidden, h);
  std::vector<FusedBufs> fb(static_cast<std::size_t>(R.world));
  for (int r = 0; r < R.world; ++r) {
    GPU_CHECK(cudaSetDevice(R.dev[r]));
    FusedBufs& b = fb[static_cast<std::size_t>(r)];
    for (void** p : {&b.res_in, &b.res_out, &b.norm, &b.res2, &b.norm2}) GPU_CHECK(cudaMalloc(p, max_bytes));
    GPU_CHECK(cudaMalloc(&b.weight, max_hidden * 2));
  }
  car::Communicator& c0 = R.virt ? *R.vcomm : *R.comms[0];
  std::size_t total_wrong = 0;
  const car::FusedVariant fv = c0.fused_variant();
  fmt::print(
      "#\n# fused all-reduce + residual add + RMSNorm, {}, {} ranks ({}), us per call ({}; {} calls); fused "
      "variant {}\n",
      specsim::dtype_name(dt), R.world, R.virt ? "virtual, one GPU" : "one a GPU", graph ? "one CUDA graph" : "eager",
      iters, car::to_string(fv));
  for (std::size_t h : hiddens) {
    const bool one_cta = !car::fused_clustered(fv);
    fmt::print(
        "# hidden {}: allreduce = auto (variant below); +norm = allreduce then the separate add+RMSNorm "
        "kernel ({}); fused = one kernel ({} of {} threads a row); ctas = fused CTAs a rank; rows = rows a "
        "row group handles in turn\n",
        h,
        one_cta ? fmt::format("one CTA of {} threads a row", car::fused_cta_threads(car::FusedVariant::Block, h))
                : fmt::format("a cluster of {} CTAs of {} threads a row", car::fused_cluster(h), car::fused_threads(h)),
        fv == car::FusedVariant::Block ? "one CTA" : fmt::format("{} CTAs", car::fused_cluster(h)),
        car::fused_cta_threads(fv, h));
    fmt::print("#{:>7} {:>9} {:>18} {:>10} {:>10} {:>10} {:>12} {:>13} {:>7} {:>5} {:>5}\n", "tokens", "bytes",
               "allreduce", "(us)", "+norm", "fused", "fused-ar", "(+norm)/fused", "#wrong", "ctas", "rows");
    for (std::size_t t : tokens) {
      const std::size_t bytes = t * h * 2, count = t * h;
      car::FusedNormShape s;
      s.tokens = t, s.hidden = h, s.dtype = dt;
      const auto p = car::ref::make_fused_problem(dt, R.world, t, h, 5000 + t * 7 + h);
      s.eps = p.eps;
      auto why = car::fused_refuse_reason({R.in[0], fb[0].res_in, fb[0].res_out, fb[0].weight, fb[0].norm, nullptr}, s,
                                          R.world, c0.max_bytes());
      if (!why) why = car::fused_variant_refuse_reason(fv, h);
      if (why) {
        fmt::print("{:>8} {:>9} not run: {}\n", t, bytes, *why);
        continue;
      }
      std::vector<car::FusedNormIo> fio, nio;
      std::vector<const void*> ins;
      for (int r = 0; r < R.world; ++r) {
        const FusedBufs& b = fb[static_cast<std::size_t>(r)];
        GPU_CHECK(cudaSetDevice(R.dev[r]));
        GPU_CHECK(cudaMemcpy(R.in[r], p.ar.in[static_cast<std::size_t>(r)].data(), bytes, cudaMemcpyHostToDevice));
        GPU_CHECK(cudaMemcpy(b.res_in, p.residual.data(), bytes, cudaMemcpyHostToDevice));
        GPU_CHECK(cudaMemcpy(b.weight, p.weight.data(), h * 2, cudaMemcpyHostToDevice));
        for (void* o : {R.out[r], b.res_out, b.norm, b.res2, b.norm2})
          GPU_CHECK(cudaMemset(o, car::ref::kPoison, bytes));
        GPU_CHECK(cudaDeviceSynchronize());
        fio.push_back({R.in[r], b.res_in, b.res_out, b.weight, b.norm, nullptr});
        nio.push_back({R.out[r], b.res_in, b.res2, b.weight, b.norm2, nullptr});
        ins.push_back(R.in[r]);
      }
      auto allreduce = [&] {
        if (R.virt) {
          R.vcomm->allreduce_virtual(ins, R.out, count, dt, Variant::Auto, R.st[0]);
          return;
        }
        for (int r = 0; r < R.world; ++r) R.comms[r]->allreduce(R.in[r], R.out[r], count, dt, Variant::Auto, R.st[r]);
      };
      auto norm = [&] {
        if (R.virt) {
          car::add_rmsnorm(nio, s, R.st[0], fv);
          return;
        }
        for (int r = 0; r < R.world; ++r) {
          GPU_CHECK(cudaSetDevice(R.dev[r]));
          car::add_rmsnorm(std::span<const car::FusedNormIo>(&nio[static_cast<std::size_t>(r)], 1), s, R.st[r], fv);
        }
        GPU_CHECK(cudaSetDevice(R.dev[0]));
      };
      auto fused = [&] {
        if (R.virt) {
          R.vcomm->allreduce_add_rmsnorm_virtual(fio, s, R.st[0]);
          return;
        }
        for (int r = 0; r < R.world; ++r)
          R.comms[r]->allreduce_add_rmsnorm(fio[static_cast<std::size_t>(r)], s, R.st[r]);
      };
      const double t_ar = time_calls(R, allreduce, iters, warmup, graph);
      std::size_t wrong = 0;
      for (int r = 0; r < R.world; ++r) wrong += car::ref::count_wrong(p.ar, fetch(R.dev[r], R.out[r], bytes));
      const double t_arn = time_calls(
          R,
          [&] {
            allreduce();
            norm();
          },
          iters, warmup, graph);
      const double t_f = time_calls(R, fused, iters, warmup, graph);
      const auto norm0 = fetch(R.dev[0], fb[0].norm, bytes);
      for (int r = 0; r < R.world; ++r) {
        const FusedBufs& b = fb[static_cast<std::size_t>(r)];
        const auto res = fetch(R.dev[r], b.res_out, bytes), res2 = fetch(R.dev[r], b.res2, bytes);
        const auto n = fetch(R.dev[r], b.norm, bytes), n2 = fetch(R.dev[r], b.norm2, bytes);
        for (std::size_t i = 0; i < 2 * count; i += 2) {
          const bool bad = std::memcmp(&res[i], &p.new_residual[i], 2) != 0 ||
                           std::memcmp(&res2[i], &p.new_residual[i], 2) != 0 || std::memcmp(&n[i], &n2[i], 2) != 0 ||
                           std::memcmp(&n[i], &norm0[i], 2) != 0;
          wrong += bad ? 1 : 0;
        }
      }
      GPU_CHECK(cudaSetDevice(R.dev[0]));
      total_wrong += wrong;
      const std::string variant(car::to_string(c0.resolve(Variant::Auto, bytes)));
      const car::FusedGeometry g = c0.fused_geometry(s);
      fmt::print("{:>8} {:>9} {:>18} {:>10.2f} {:>10.2f} {:>10.2f} {:>12.2f} {:>12.2f}x {:>7} {:>5} {:>5}\n", t, bytes,
                 variant, t_ar, t_arn, t_f, t_f - t_ar, t_arn / t_f, wrong, g.blocks, g.rows_per_group);
    }
  }
  for (int r = 0; r < R.world; ++r) {
    GPU_CHECK(cudaSetDevice(R.dev[r]));
    const FusedBufs& b = fb[static_cast<std::size_t>(r)];
    for (void* q : {b.res_in, b.res_out, b.weight, b.norm, b.res2, b.norm2}) cudaFree(q);
  }
  GPU_CHECK(cudaSetDevice(R.dev[0]));
  return total_wrong;
}

}  // namespace specsim::arbench
