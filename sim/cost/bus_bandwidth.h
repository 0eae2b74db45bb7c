#pragma once
// Bandwidth conversions, each written once: nccl-tests' bus bandwidth of a ring all-reduce
// (busbw = algbw * 2(n-1)/n, nccl-tests doc/PERFORMANCE.md) and GB/s <-> bytes per microsecond.
// Header only and without dependencies, so the CUDA benchmarks (tools/arbench) use it too.

namespace specsim {

/// Algorithm bandwidth per unit of bus bandwidth of an all-reduce over `ranks`: n / (2(n-1)).
constexpr double allreduce_algbw_per_busbw(int ranks) { return double(ranks) / (2.0 * (ranks - 1)); }

/// The all-reduce's algorithm bandwidth (bytes per rank / time) of a bus bandwidth, GB/s (one rank:
/// the same number, as a profile's busbw_gbps reads there).
constexpr double allreduce_algbw_gbps(double busbw_gbps, int ranks) {
  return ranks > 1 ? busbw_gbps * ranks / (2.0 * (ranks - 1)) : busbw_gbps;
}

/// The all-reduce's bus bandwidth of an algorithm bandwidth, GB/s (what nccl-tests prints as busbw;
/// one rank: 0, nothing crosses a bus).
constexpr double allreduce_busbw_gbps(double algbw_gbps, int ranks) {
  return ranks > 1 ? algbw_gbps / allreduce_algbw_per_busbw(ranks) : 0.0;
}

/// Bytes per microsecond at `gbps` GB/s (1 GB/s = 1e9 bytes/s = 1e3 bytes/us).
constexpr double bytes_per_us(double gbps) { return gbps * 1e3; }

/// Microseconds per byte at `gbps` GB/s.
constexpr double us_per_byte(double gbps) { return 1.0 / bytes_per_us(gbps); }

/// GB/s of a time per byte in microseconds: the inverse of us_per_byte.
constexpr double gbps_of_us_per_byte(double us) { return 1.0 / (us * 1e3); }

/// GB/s of `bytes` moved in `us` microseconds.
constexpr double gbps_of(double bytes, double us) { return bytes / us / 1e3; }

/// Microseconds to move `bytes` at `gbps` GB/s.
constexpr double transfer_us(double bytes, double gbps) { return bytes / bytes_per_us(gbps); }

}  // namespace specsim
