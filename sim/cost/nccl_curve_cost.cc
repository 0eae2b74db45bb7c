#include "cost/nccl_curve_cost.h"

#include "cost/bus_bandwidth.h"

namespace specsim {

const NcclFitPiece* nccl_fit_piece(const NcclFit& fit, double bytes, int ranks) {
  if (fit.world != ranks || fit.pieces.empty()) return nullptr;
  for (const auto& p : fit.pieces)
    if (bytes <= p.max_bytes) return &p;
  // Past the measured sizes a piece with bandwidth extends; a latency-only one (a table of small
  // sizes alone) says nothing there, and would price a large all-reduce as free.
  return fit.pieces.back().busbw_gbps > 0 ? &fit.pieces.back() : nullptr;
}

double nccl_fit_algbw_gbps(const NcclFitPiece& piece, int ranks) {
  return allreduce_algbw_gbps(piece.busbw_gbps, ranks);
}

double nccl_fit_piece_us(const NcclFitPiece& piece, double bytes, int ranks) {
  const double bw = nccl_fit_algbw_gbps(piece, ranks);
  return piece.lat_us + (bw > 0 ? transfer_us(bytes, bw) : 0.0);
}

double nccl_fit_us(const NcclFit& fit, double bytes) {
  const NcclFitPiece* p = nccl_fit_piece(fit, bytes, fit.world);
  return p ? nccl_fit_piece_us(*p, bytes, fit.world) : 0.0;
}

}  // namespace specsim
