// Host-only logic of the custom all-reduce (runs in CI without a GPU): names, the selector,
// the refusal logic and the byte counts.
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
  for (Variant v : {Variant::Auto, Variant::OneShotPull, Variant::OneShotPush, Variant::TwoShot})
    ck.expect(car::parse_variant(car::to_string(v)) == v, "variant name " + std::string(name(v)));
  for (DType d : {DType::BF16, DType::FP16, DType::FP32})
    ck.expect(car::parse_dtype(car::to_string(d)) == d, "dtype name " + std::string(name(d)));
  ck.expect(!car::parse_variant("one-shot").has_value(), "unknown variant name parsed");
  ck.expect(car::parse_link("pcie") == Link::PCIe && car::parse_link("nvlink") == Link::NVLink, "link names");
  ck.expect(car::parse_dtype("float") == DType::FP32, "nccl-tests dtype name float");

  // selector: never Auto; NVLink one-shot for small, two-shot for large; PCIe pushes small
  for (int w = 2; w <= 8; ++w)
    for (std::size_t b = 16; b <= (std::size_t{8} << 20); b *= 2)
      for (Link l : {Link::NVLink, Link::PCIe})
        ck.expect(car::select_variant(b, w, l) != Variant::Auto, "selector returned Auto");
  ck.expect(car::select_variant(43008, 8, Link::NVLink) == Variant::OneShotPull, "nvl 42K w8");
  ck.expect(car::select_variant(8 << 20, 8, Link::NVLink) == Variant::TwoShot, "nvl 8M w8");
  ck.expect(car::select_variant(8 << 20, 2, Link::NVLink) == Variant::OneShotPull, "nvl 8M w2");
  ck.expect(car::select_variant(300 << 10, 4, Link::NVLink) == Variant::OneShotPull, "nvl 300K w4");
  ck.expect(car::select_variant(300 << 10, 8, Link::NVLink) == Variant::TwoShot, "nvl 300K w8");
  ck.expect(car::select_variant(43008, 8, Link::PCIe) == Variant::OneShotPush, "pcie 42K w8");
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

  // byte counts
  ck.expect(car::moved_bytes_per_rank(Variant::OneShotPull, 1000, 8) == 11000, "pull bytes");
  ck.expect(car::moved_bytes_per_rank(Variant::OneShotPush, 1000, 8) == 18000, "push bytes");
  ck.expect(car::moved_bytes_per_rank(Variant::TwoShot, 1000, 8) == 5125, "two-shot bytes");
  ck.expect(car::region_bytes(8, 8 << 20) > 19u * (8u << 20), "region holds 19 slots");

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
