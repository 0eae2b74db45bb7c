#pragma once
// Whether an MPI launcher (Open MPI's mpirun, MPICH/Hydra, Slurm) started this process, read from
// the environment before MPI is up. One variable alone is not enough (a shell may have inherited
// PMI_RANK from an earlier job): the launcher's size and rank must both be set, be whole numbers,
// and agree (0 <= rank < size). Header-only: the CPU command line and the CUDA kernels share it.
#include <cstdlib>
#include <optional>
#include <string>

namespace specsim {

/// This process's place in the job its launcher started.
struct LauncherPlace {
  int rank = 0, size = 1;
};

namespace detail {
inline std::optional<int> env_count(const char* name) {
  const char* s = std::getenv(name);
  if (!s || !*s) return std::nullopt;
  long v = 0;
  for (const char* p = s; *p; ++p) {
    if (*p < '0' || *p > '9' || v > 1'000'000) return std::nullopt;
    v = v * 10 + (*p - '0');
  }
  return static_cast<int>(v);
}
}  // namespace detail

/// The launcher's (rank, size) when a consistent pair is set, else nullopt.
inline std::optional<LauncherPlace> mpi_launcher_place() {
  static constexpr const char* kPairs[][2] = {
      {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"}, {"PMI_SIZE", "PMI_RANK"}, {"SLURM_NTASKS", "PMIX_RANK"}};
  for (const auto& pair : kPairs) {
    const auto size = detail::env_count(pair[0]), rank = detail::env_count(pair[1]);
    if (size && rank && *size >= 1 && *rank < *size) return LauncherPlace{*rank, *size};
  }
  return std::nullopt;
}

}  // namespace specsim
