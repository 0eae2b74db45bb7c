#include "calibrate/allreduce_fit.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "calibrate/fit_checks.h"
#include "calibrate/fit_profile_writer.h"
#include "util/error.h"

namespace specsim {

AllReduceCalibration calibrate_allreduce(const std::vector<ReplayReport>& from,
                                         const std::vector<ReplayReport>& holdout, const Hardware& base,
                                         const Hardware& cal, const std::string& hardware_spec,
                                         nlohmann::json& profile) {
  AllReduceCalibration c;
  c.base = base, c.calibrated = cal;
  const auto pts = allreduce_points(from, &c.notes);
  if (pts.empty()) return c;
  c.held = allreduce_points(holdout, &c.notes);
  std::map<AllReduceChoice::Kind, std::vector<AllReducePoint>> by_kind;
  for (const auto& p : pts) by_kind[p.backend.kind].push_back(p);
  for (const auto& [kind, group] : by_kind) {
    std::set<int> worlds;
    for (const auto& p : group) worlds.insert(p.world);
    for (int w : worlds)
      if (w > cal.topo.max_gpus)
        throw InputError(fmt::format("the reports ran on {} GPUs but topology {} holds at most {}", w, cal.topo.name,
                                     cal.topo.max_gpus),
                         "--hardware");
    check_allreduce_fit_data(group);
    const std::string head = allreduce_fit_source_head(group);
    if (kind == AllReduceChoice::Kind::Nccl) {
      if (worlds.size() > 1)
        throw InputError(fmt::format("the NCCL reports ran at world sizes {}: a profile holds one measured NCCL curve, "
                                     "so calibrate one world size at a time",
                                     fmt::join(worlds, ", ")),
                         "--from");
      AllReduceFit f = fit_nccl_allreduce(group, cal, head);
      write_nccl_allreduce_fit(profile, f, head, hardware_spec);
      c.calibrated.topo.nccl_fit = f.topo.nccl_fit;
      c.fits.push_back(std::move(f));
    } else {
      AllReduceFit f = fit_custom_allreduce(group, cal);
      write_custom_allreduce_fit(profile, f, head, hardware_spec);
      c.calibrated.topo.barrier_us = f.topo.barrier_us;
      c.calibrated.topo.peer_read_bw_gbps = f.topo.peer_read_bw_gbps;
      c.calibrated.topo.peer_write_bw_gbps = f.topo.peer_write_bw_gbps;
      c.fits.push_back(std::move(f));
    }
  }
  // Before: the shipped machine; after: the profile as written (compute and all-reduce fits).
  for (auto& f : c.fits) set_worst_errors(f, base, c.calibrated), check_allreduce_fit_quality(f);
  write_allreduce_summary(profile, c.fits);
  return c;
}

}  // namespace specsim
