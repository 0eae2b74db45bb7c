#pragma once
// DeepEP's dispatch and combine kernels priced from the tables DeepSeek published
// (models/kernels/deepep.json, docs/sources.md#S-deepep-tables).
#include <map>

namespace specsim {

struct DeepEPModel {
  double ll_table_tokens = 0, ll_hidden = 0, ll_topk = 0, ll_fixed_us = 0;
  std::map<int, double> ll_dispatch_us, ll_combine_us;  ///< EP size -> latency at the table's setting
  double normal_dispatch_gbps = 0, normal_combine_gbps = 0, normal_fixed_us = 0;

  /// The table's latency at `ep` ranks: log2-linear between published points, the nearest beyond.
  double table_us(int ep, bool combine) const;
  /// Bytes one rank sends at the table's setting (fp8 + scales dispatch, bf16 combine).
  double table_bytes(bool combine) const;
  /// One dispatch or combine of `bytes` sent per rank over `ep` ranks, us.
  double us(double bytes, int ep, bool combine, bool low_latency) const;
};

/// The model, read once from models/kernels/deepep.json; InputError naming the file when malformed.
const DeepEPModel& deepep_model();

}  // namespace specsim
