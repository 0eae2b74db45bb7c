#pragma once
// Roofline time of a compute op (GEMM, attention, norm, elementwise) on one GPU.
#include "plan/op.h"
#include "spec/hardware.h"

namespace specsim {

/// GPU time of a non-collective op, microseconds: the larger of FLOPs at the dtype's peak times
/// the GEMM efficiency and bytes at memory bandwidth times the op class's efficiency, plus (for
/// GEMMs) a fixed per-kernel cost, and never less than the GPU's per-kernel minimum.
double compute_us(const Op& op, const GpuProfile& gpu);

}  // namespace specsim
