#pragma once
// A measured all-reduce curve (topology field `nccl_fit`, scenario/nccl_curve.h) evaluated:
// which piece prices a message size at a world size, and the time it gives. Every reader of the
// pieces by size (the NCCL model, the calibration) goes through nccl_fit_piece.
#include "scenario/nccl_curve.h"

namespace specsim {

/// The piece of `fit` that prices an all-reduce of `bytes` per rank over `ranks`: the first whose
/// max_bytes holds `bytes`, the last beyond them all when it has a bandwidth; nullptr when the fit
/// was measured at another world size, holds no piece, or ends below `bytes` in a latency-only piece.
const NcclFitPiece* nccl_fit_piece(const NcclFit& fit, double bytes, int ranks);

/// The piece's algorithm bandwidth over `ranks`, GB/s (0: a latency-only piece).
double nccl_fit_algbw_gbps(const NcclFitPiece& piece, int ranks);

/// lat_us + bytes / algbw of `piece` over `ranks`, microseconds.
double nccl_fit_piece_us(const NcclFitPiece& piece, double bytes, int ranks);

/// The fit's time for `bytes` at its own world size (0 when it holds no piece).
double nccl_fit_us(const NcclFit& fit, double bytes);

}  // namespace specsim
