// Host-only parts of the custom all-reduce: names, the variant selector, the refusal logic
// and the byte counts. No CUDA calls: unit-tested on machines without a GPU.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

#include "car_layout.h"
#include "custom_allreduce.h"
#include "scenario/custom_ar_policy.h"

namespace specsim::car {

namespace {

bool valid(Variant v) {
  if (v == Variant::Auto) return true;
  for (Variant c : car_policy::kConcreteVariants)
    if (v == c) return true;
  return false;
}

std::string hex(std::uintptr_t p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(p));
  return buf;
}

}  // namespace

std::string_view to_string(Variant v) { return car_policy::variant_name(v); }

std::string_view to_string(Link l) {
  switch (l) {
    case Link::NVLink: return "nvlink";
    case Link::PCIe: return "pcie";
  }
  return "invalid-link";
}

std::optional<Variant> parse_variant(std::string_view name) { return car_policy::parse_variant(name); }

// The kernels' element types only (fp8, which the engine parses, is not one): their engine names
// (specsim::dtype_name) and the nccl-tests ones.
std::optional<DType> parse_dtype(std::string_view name) {
  if (name == "bf16" || name == "bfloat16") return DType::BF16;
  if (name == "fp16" || name == "half" || name == "float16") return DType::FP16;
  if (name == "fp32" || name == "float" || name == "float32") return DType::FP32;
  return std::nullopt;
}

std::optional<Link> parse_link(std::string_view name) {
  if (name == "nvlink") return Link::NVLink;
  if (name == "pcie") return Link::PCIe;
  return std::nullopt;
}

Variant select_variant(std::size_t bytes, int world, Link link) {
  return car_policy::select(bytes, world, link == Link::PCIe);  // shared with the engine
}

std::optional<std::string> refuse_reason(const CallDesc& c) {
  if (c.world < kMinRanks || c.world > kMaxRanks)
    return "world size " + std::to_string(c.world) + " is outside the supported 2..8";
  if (c.dtype == DType::FP8) return "dtype fp8 is not supported: the custom all-reduce kernels run bf16, fp16 and fp32";
  if (!is_kernel_dtype(c.dtype)) return "unknown dtype value " + std::to_string(static_cast<int>(c.dtype));
  if (!valid(c.variant)) return "unknown variant value " + std::to_string(static_cast<int>(c.variant));
  if (c.count == 0) return "count is 0: an empty all-reduce is refused rather than skipped";
  const std::size_t eb = elem_bytes(c.dtype);
  if (c.count > std::numeric_limits<std::size_t>::max() / eb)
    return "count " + std::to_string(c.count) + " overflows the byte size";
  const std::size_t bytes = c.count * eb;
  if (bytes > c.max_bytes)
    return "message of " + std::to_string(bytes) + " bytes exceeds the communicator's buffer of " +
           std::to_string(c.max_bytes) + " bytes (Options::max_bytes)";
  if (car_policy::is_flag_free(c.variant) && bytes > car_policy::kLlMaxBytes)
    return "message of " + std::to_string(bytes) + " bytes exceeds the " + std::to_string(car_policy::kLlMaxBytes) +
           " bytes " + std::string(to_string(c.variant)) +
           " carries (its receive slots are sized for small "
           "messages); use auto or another variant";
  if (c.in == 0 || c.out == 0) return "null input or output pointer";
  if (c.in % kAlignBytes != 0) return "input pointer " + hex(c.in) + " is not 16-byte aligned (16-byte vector loads)";
  if (c.out % kAlignBytes != 0)
    return "output pointer " + hex(c.out) + " is not 16-byte aligned (16-byte vector stores)";
  if (c.in != c.out && c.in < c.out + bytes && c.out < c.in + bytes)
    return "input and output overlap without being the same buffer (in-place needs in == out)";
  return std::nullopt;
}

std::size_t region_bytes(int world, std::size_t max_bytes) {
  return detail::region_size(std::clamp(world, 1, kMaxRanks), max_bytes);
}

double moved_bytes_per_rank(Variant v, std::size_t bytes, int world) {
  const double b = static_cast<double>(bytes), w = world;
  switch (v) {
    case Variant::OneShotPull: return (w + 3) * b;      // stage r+w, read world, write out
    case Variant::OneShotPush: return (2 * w + 2) * b;  // read in, write world, read world, write out
    case Variant::TwoShot:
      return 5 * b + b / w;  // stage 2b, RS b + b/w, AG 2b
    // read in, write world-1 slots, read them, empty them, read in again, write out: 3 w b
    // (pull moves the same bytes; its slots sit at the writer)
    case Variant::OneShotLL:
    case Variant::OneShotLLPull: return 3 * w * b;
    // read in, write (w-1)/w of it to the owners, read and empty that at the owner, read the own
    // slice again, write the sums w-1 times, read and empty them, write out: (2 + 1/w + 6 (w-1)/w) b
    case Variant::TwoShotLL: return (2 + 1 / w + 6 * (w - 1) / w) * b;
    // read in, write the one own copy, read the world-1 peers' copies, empty the own copy of the
    // call before (as long as this one's), read in again, write out: (w + 4) b
    case Variant::OneShotLLBcast: return (w + 4) * b;
    case Variant::Auto: break;
  }
  return 0;
}

}  // namespace specsim::car
