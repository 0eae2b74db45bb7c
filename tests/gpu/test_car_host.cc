// Host-only logic of the custom all-reduce (runs in CI without a GPU): names, the selector,
// the refusal logic and the byte counts.
#include <stdexcept>
#include <string>

#include "car_test_util.h"

using namespace cartest;
using specsim::car::CallDesc;
using specsim::car::Link;
namespace car = specsim::car;

namespace {

CallDesc ok_call() {
  CallDesc c;
  c.in = 0x10000;
  c.out = 0x20000;
  c.count = 1000;
  c.dtype = DType::BF16;
  c.variant = Variant::Auto;
  c.world = 8;
  c.max_bytes = 8 << 20;
  return c;
}

void refused(Checker& ck, const CallDesc& c, const std::string& needle, const std::string& what) {
  const auto why = car::refuse_reason(c);
  ck.expect(why.has_value(), what + ": accepted");
  if (why) ck.expect(why->find(needle) != std::string::npos, what + ": reason '" + *why + "'");
}

}  // namespace

int main() {
  Checker ck;
  // names round-trip
  for (Variant v : {Variant::Auto, Variant::OneShotPull, Variant::OneShotPush, Variant::TwoShot, Variant::OneShotLL,
                    Variant::OneShotLLPull, Variant::TwoShotLL, Variant::OneShotLLBcast})
    ck.expect(car::parse_variant(car::to_string(v)) == v, "variant name " + std::string(name(v)));
  ck.expect(car::to_string(Variant::OneShotLL) == "one-shot-ll" &&
                car::to_string(Variant::OneShotLLPull) == "one-shot-ll-pull" &&
                car::to_string(Variant::TwoShotLL) == "two-shot-ll" &&
                car::to_string(Variant::OneShotLLBcast) == "one-shot-ll-bcast",
            "flag-free names");
  for (DType d : {DType::BF16, DType::FP16, DType::FP32})
    ck.expect(car::parse_dtype(specsim::dtype_name(d)) == d, "dtype name " + std::string(name(d)));
  ck.expect(std::string(name(DType::BF16)) == "bf16" && std::string(name(DType::FP16)) == "fp16" &&
                std::string(name(DType::FP32)) == "fp32",
            "dtype names");
  ck.expect(car::elem_bytes(DType::BF16) == 2 && car::elem_bytes(DType::FP16) == 2 && car::elem_bytes(DType::FP32) == 4,
            "element sizes");
  // fp8 is the engine's weight type, not a kernel element type: never parsed, always refused
  ck.expect(!car::parse_dtype("fp8").has_value() && !car::parse_dtype("e4m3").has_value(), "fp8 parsed");
  ck.expect(car::is_kernel_dtype(DType::BF16) && car::is_kernel_dtype(DType::FP16) &&
                car::is_kernel_dtype(DType::FP32) && !car::is_kernel_dtype(DType::FP8),
            "kernel dtypes");
  ck.expect(!car::parse_variant("one-shot").has_value(), "unknown variant name parsed");
  ck.expect(car::parse_link("pcie") == Link::PCIe && car::parse_link("nvlink") == Link::NVLink, "link names");
  ck.expect(car::parse_dtype("float") == DType::FP32, "nccl-tests dtype name float");

  // selector: never Auto, never a flag-free variant above its cap; flag-free for small messages on
  // both links; then NVLink one-shot pull / two-shot, PCIe push / two-shot
  for (int w = 2; w <= 8; ++w)
    for (std::size_t b = 16; b <= (std::size_t{8} << 20); b *= 2)
      for (Link l : {Link::NVLink, Link::PCIe}) {
        const Variant v = car::select_variant(b, w, l);
        ck.expect(v != Variant::Auto, "selector returned Auto");
        ck.expect(!specsim::car_policy::is_flag_free(v) || b <= specsim::car_policy::kLlMaxBytes,
                  "selector picked a flag-free variant above its cap");
        // two-shot-ll is measured on virtual ranks only; the engine does not cost it
        ck.expect(v != Variant::TwoShotLL, "selector picked two-shot-ll");
        // one-shot-ll-bcast: the engine's model puts it above what auto runs on every link profile
        // (tests/test_cost.cc), so auto never runs it
        ck.expect(v != Variant::OneShotLLBcast, "selector picked one-shot-ll-bcast");
      }
  for (Link l : {Link::NVLink, Link::PCIe})
    for (int w : {2, 4, 8})
      for (std::size_t b : {std::size_t{16}, std::size_t{14336}, std::size_t{43008}, std::size_t{114688}})
        ck.expect(car::select_variant(b, w, l) == Variant::OneShotLL,
                  "small message not flag-free: " + std::to_string(b) + " B w" + std::to_string(w));
  ck.expect(car::select_variant(1 << 20, 2, Link::NVLink) == Variant::OneShotLL, "nvl 1M w2");
  ck.expect(car::select_variant(8 << 20, 8, Link::NVLink) == Variant::TwoShot, "nvl 8M w8");
  ck.expect(car::select_variant(8 << 20, 2, Link::NVLink) == Variant::OneShotPull, "nvl 8M w2");
  ck.expect(car::select_variant(2 << 20, 4, Link::NVLink) == Variant::TwoShot, "nvl 2M w4");
  ck.expect(car::select_variant(1 << 20, 8, Link::NVLink) == Variant::TwoShot, "nvl 1M w8");
  ck.expect(car::select_variant(1 << 20, 8, Link::PCIe) == Variant::TwoShot, "pcie 1M w8");

  // refusal logic
  ck.expect(!car::refuse_reason(ok_call()).has_value(), "a plain call refused");
  CallDesc c = ok_call();
  c.in = c.out;
  ck.expect(!car::refuse_reason(c).has_value(), "in-place refused");
  for (int w : {-1, 0, 1, 9, 16}) {
    c = ok_call();
    c.world = w;
    refused(ck, c, "outside the supported 2..8", "world " + std::to_string(w));
  }
  for (int w = 2; w <= 8; ++w) {
    c = ok_call();
    c.world = w;
    ck.expect(!car::refuse_reason(c).has_value(), "world " + std::to_string(w) + " refused");
  }
  c = ok_call();
  c.count = 0;
  refused(ck, c, "count is 0", "count 0");
  c = ok_call();
  c.count = (8 << 20) / 2 + 1;
  refused(ck, c, "exceeds", "one element over the buffer");
  c.count = (8 << 20) / 2;
  c.out = c.in + (8 << 20);  // adjacent, not overlapping
  ck.expect(!car::refuse_reason(c).has_value(), "exactly the buffer refused");
  c = ok_call();
  c.count = ~std::size_t{0} / 2 + 1;
  refused(ck, c, "overflow", "byte size overflow");
  c = ok_call();
  c.in += 2;
  refused(ck, c, "not 16-byte aligned", "misaligned input");
  c = ok_call();
  c.out += 8;
  refused(ck, c, "not 16-byte aligned", "misaligned output");
  c = ok_call();
  c.out = c.in + 256;  // overlaps 2000 bytes of input
  refused(ck, c, "overlap", "partial overlap");
  c = ok_call();
  c.in = 0;
  refused(ck, c, "null", "null input");
  c = ok_call();
  c.variant = static_cast<Variant>(9);
  refused(ck, c, "unknown variant", "bad variant value");
  c = ok_call();
  c.dtype = static_cast<DType>(7);
  refused(ck, c, "unknown dtype", "bad dtype value");
  c = ok_call();
  c.dtype = DType::FP8;
  refused(ck, c, "dtype fp8 is not supported: the custom all-reduce kernels run bf16, fp16 and fp32", "fp8");
  bool ref_refused = false;
  try {
    make_problem(DType::FP8, 2, 16, 1);
  } catch (const std::invalid_argument& e) {
    ref_refused = std::string(e.what()).find("no fp8 reference") != std::string::npos;
  }
  ck.expect(ref_refused, "the reference built an fp8 problem");
  // flag-free variants: up to kLlMaxBytes, refused (not truncated) above
  for (Variant v : {Variant::OneShotLL, Variant::OneShotLLPull, Variant::TwoShotLL, Variant::OneShotLLBcast}) {
    c = ok_call();
    c.variant = v;
    c.count = specsim::car_policy::kLlMaxBytes / 2;
    c.out = c.in + 2 * specsim::car_policy::kLlMaxBytes;  // no overlap
    ck.expect(!car::refuse_reason(c).has_value(), std::string(name(v)) + " at its cap refused");
    c.count += 1;
    refused(ck, c, "carries", std::string(name(v)) + " one element over its cap");
  }

  // byte counts
  ck.expect(car::moved_bytes_per_rank(Variant::OneShotPull, 1000, 8) == 11000, "pull bytes");
  ck.expect(car::moved_bytes_per_rank(Variant::OneShotPush, 1000, 8) == 18000, "push bytes");
  ck.expect(car::moved_bytes_per_rank(Variant::TwoShot, 1000, 8) == 5125, "two-shot bytes");
  ck.expect(car::moved_bytes_per_rank(Variant::OneShotLL, 1000, 8) == 24000, "flag-free bytes");
  // in 1000, 7/8 out and back at the owner (875 x 3), own slice 125, sums out 875 and back (x 3), out 1000
  ck.expect(car::moved_bytes_per_rank(Variant::TwoShotLL, 1000, 8) == 7375, "flag-free two-shot bytes");
  // in, own copy, 7 peers' copies, emptying, in again, out: 12 x 1000 (one-shot-ll: 24 x 1000)
  ck.expect(car::moved_bytes_per_rank(Variant::OneShotLLBcast, 1000, 8) == 12000, "flag-free bcast bytes");
  ck.expect(car::moved_bytes_per_rank(Variant::OneShotLLBcast, 1000, 2) == 6000, "flag-free bcast bytes, 2 ranks");
  ck.expect(car::region_bytes(8, 8 << 20) >= 19u * (8u << 20) + (16u + 3u) * (1u << 20) + 65536,
            "region holds 19 slots, 16 flag-free slots and 3 bcast slots");
  ck.expect(car::region_bytes(2, 4096) == 65536 + 7 * 4096 + (4 + 3) * 4096,
            "small region: flag-free and bcast slots of max_bytes");

  // host conversions used by the reference
  ck.expect(float_to_bf16(1.0f) == 0x3f80 && float_to_half(1.0f) == 0x3c00, "1.0 conversions");
  ck.expect(float_to_half(65504.0f) == 0x7bff && float_to_half(65520.0f) == 0x7c00, "half max");
  ck.expect(float_to_half(0x1.0p-24f) == 0x0001 && float_to_half(0x1.0p-25f) == 0x0000,
            "half subnormal rounding to even");
  ck.expect(half_to_float(0x0001) == 0x1.0p-24f && half_to_float(0xbc00) == -1.0f, "half to float");
  ck.expect(float_to_bf16(1.00390625f) == 0x3f80, "bf16 ties to even");  // 1 + 2^-8
  for (std::uint32_t h = 0; h < 0x7c00; ++h)
    if (float_to_half(half_to_float(static_cast<std::uint16_t>(h))) != h) {
      ck.expect(false, "half round trip " + std::to_string(h));
      break;
    }
  return ck.finish("gpu_car_host");
}
