#pragma once
// The built-in all-reduce backends behind AllReduceModel (allreduce_model.h).
#include "cost/allreduce_model.h"

namespace specsim {

/// NCCL's own tuning model, or the topology's fitted nccl-tests curve (nccl_model.h).
class NcclAllReduce final : public AllReduceModel {
 public:
  double time_us(const AllReduceQuery& q) const override;
  double host_us(const AllReduceQuery& q) const override;
  std::string describe(const AllReduceQuery& q) const override;
  std::string refusal(const AllReduceQuery& q) const override;
  bool takes_nccl_anchors() const override { return true; }
  GpuRunner gpu_runner() const override { return GpuRunner::Nccl; }
  bool fittable() const override { return true; }
};

/// Our custom kernel (custom_ar_model.h): the variant the choice names, or what `auto` runs.
class CustomAllReduce final : public AllReduceModel {
 public:
  double time_us(const AllReduceQuery& q) const override;
  double host_us(const AllReduceQuery& q) const override;
  std::string describe(const AllReduceQuery& q) const override;
  std::string refusal(const AllReduceQuery& q) const override;
  GpuRunner gpu_runner() const override { return GpuRunner::Custom; }
  bool fittable() const override { return true; }
};

/// A latency the user measured or wants to try (`fixed:US`), the same for every payload.
class FixedAllReduce final : public AllReduceModel {
 public:
  double time_us(const AllReduceQuery& q) const override;
  double host_us(const AllReduceQuery& q) const override;
  std::string describe(const AllReduceQuery& q) const override;
  std::string refusal(const AllReduceQuery& q) const override;
  bool floored() const override { return false; }  // as given
  std::string no_kernel_note() const override { return "nothing to verify: a fixed latency, no kernel"; }
};

}  // namespace specsim
