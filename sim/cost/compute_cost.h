#pragma once
// Roofline time of a compute op (GEMM, attention, norm, elementwise) on one GPU. The terms are
// exposed one by one so that `specsim calibrate --from` fits the profile to this same formula.
#include "plan/op.h"
#include "scenario/hardware.h"

namespace specsim {

/// Which of the GPU profile's efficiency sets prices an op.
enum class RooflineClass { Gemm, Attention, Memory };

/// Which term of the roofline gives an op's time.
enum class RooflineBound { Compute, Memory, Floor };

/// An op's roofline before the profile's efficiencies: its work and the GPU's full rates.
struct RooflineTerms {
  RooflineClass cls = RooflineClass::Memory;
  double flops = 0, peak_flop_per_us = 0;  ///< peak 0: no FLOP term (norms, elementwise kernels)
  double bytes = 0, peak_bytes_per_us = 0;
  /// FLOPs at the full peak of the op's dtype, us (0 without a FLOP term).
  double flop_us_at_peak() const { return peak_flop_per_us > 0 ? flops / peak_flop_per_us : 0.0; }
  /// Bytes at full memory bandwidth, us.
  double byte_us_at_peak() const { return bytes / peak_bytes_per_us; }
};

/// The profile's parameters of one class: efficiencies and the kernel's fixed cost.
struct RooflineParams {
  double compute_efficiency = 0;  ///< 0: the class has no FLOP term
  double memory_efficiency = 0;
  double fixed_us = 0;  ///< a GEMM or attention kernel's ramp-up and tail, on top of its roofline time
};

/// The terms of a non-collective op on `gpu`.
RooflineTerms roofline_terms(const Op& op, const GpuProfile& gpu);

/// The efficiencies and fixed cost `gpu` gives an op class.
RooflineParams roofline_params(RooflineClass cls, const GpuProfile& gpu);

/// Which term of max(fixed + max(flop, byte), floor) is the time (ties: the FLOP term, then the kernel's).
RooflineBound roofline_bound(double fixed_us, double flop_us, double byte_us, double floor_us);

/// GPU time of a non-collective op, microseconds: the larger of FLOPs at the dtype's peak times
/// the class's compute efficiency and bytes at memory bandwidth times the class's memory
/// efficiency, plus the class's fixed per-kernel cost, and never less than the GPU's per-kernel
/// minimum. Fused-MoE expert GEMMs take the profile's moe_gemm_* fixed cost and memory
/// efficiency where it has them.
double compute_us(const Op& op, const GpuProfile& gpu);

}  // namespace specsim
