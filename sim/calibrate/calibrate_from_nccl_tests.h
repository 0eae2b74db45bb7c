#pragma once
// `specsim calibrate --nccl-tests LOG`: the all-reduce table of an nccl-tests log fitted
// (piecewise latency + bandwidth), written into a copy of a hardware profile, the fit printed.
#include <iosfwd>
#include <string>

namespace specsim {

/// The whole mode: fit the table of `world_asked` ranks (0: the log's only world size) of the log
/// `nccl_tests` into the `hardware` profile (GPU:TOPOLOGY or a path), write `out_profile`
/// (loadable by load_hardware) and print the fit to `out`. InputError on a degenerate fit or a
/// world the topology cannot hold, with nothing written.
void calibrate_from_nccl_tests(const std::string& nccl_tests, const std::string& out_profile,
                               const std::string& hardware, int world_asked, std::ostream& out);

}  // namespace specsim
