#pragma once
// What `specsim calibrate --from` writes into the profile (the base profile's raw JSON,
// profile_io.h): each fitted number with its source (the command, the device, the date, the
// method), the descriptions, and the "calibration" block.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibrate/allreduce_fit_result.h"
#include "calibrate/replay_fit.h"

namespace specsim {

/// The compute fit: profile["gpu"] fields of `fitted` (the base with `fit` applied) with their
/// source, the GPU's description, and profile["calibration"] (mode, reports, base, date, clamps).
void write_compute_fit(nlohmann::json& profile, const GpuProfile& fitted, const ReplayFit& fit,
                       const std::vector<std::string>& from, const std::string& device,
                       const std::string& hardware_spec);

/// "measured: specsim calibrate --from FILES on DEVICES (DATE): ..." of one backend's points.
std::string allreduce_fit_source_head(const std::vector<AllReducePoint>& points);

/// The NCCL fit's curve as profile["topology"]["nccl_fit"], its source completed from `head`
/// (also in f.topo.nccl_fit).
void write_nccl_allreduce_fit(nlohmann::json& profile, AllReduceFit& f, const std::string& head,
                              const std::string& hardware_spec);

/// The custom fit's values the points constrained, as profile["topology"] fields with their source.
void write_custom_allreduce_fit(nlohmann::json& profile, const AllReduceFit& f, const std::string& head,
                                const std::string& hardware_spec);

/// profile["calibration"]["allreduce"] (per fit: backend, world, graphs, graph cost, worst errors,
/// notes) and the topology's description.
void write_allreduce_summary(nlohmann::json& profile, const std::vector<AllReduceFit>& fits);

}  // namespace specsim
