#pragma once
// Unix-socket rendezvous for the multi-process custom all-reduce: every rank sends one fixed
// record to rank 0, which answers each with the table of all records.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace specsim::car::detail {

/// What a rank tells its peers.
struct JoinRecord {
  std::uint64_t magic;        ///< kJoinMagic: guards against foreign peers
  std::int32_t world;         ///< world size the rank was started with
  std::int32_t rank;          ///< its rank
  std::int32_t pid;           ///< its process id (for messages)
  std::int32_t reserved;      ///< zero
  char pci_bus_id[32];        ///< its GPU, as cudaDeviceGetPCIBusId writes it
  cudaIpcMemHandle_t region;  ///< IPC handle of its shared region
};

inline constexpr std::uint64_t kJoinMagic = 0x7370656373696d31ull;  // "specsim1"

/// Exchanges records among `world` ranks through `dir`/specsim-car-`tag`.sock. Returns the
/// records indexed by rank. Throws std::runtime_error naming what went wrong (timeout, a
/// missing rank, a duplicate rank, a world-size mismatch, a path too long).
std::vector<JoinRecord> rendezvous(const std::string& dir, const std::string& tag, const JoinRecord& mine,
                                   double timeout_s);

/// True when built with MPI and MPI is initialized and not yet finalized (car_mpi.cc).
bool mpi_initialized();
/// This process's rank and size in MPI_COMM_WORLD; throws when MPI is absent or not initialized.
void mpi_rank_world(int& rank, int& world);
/// Every rank's record through one MPI_Allgather over MPI_COMM_WORLD, indexed by rank. Throws,
/// before any communication, when `mine.rank`/`mine.world` disagree with MPI_COMM_WORLD.
std::vector<JoinRecord> mpi_exchange(const JoinRecord& mine);

}  // namespace specsim::car::detail
