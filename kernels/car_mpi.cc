// MPI handle exchange for the multi-process custom all-reduce: under mpirun every rank's join
// record goes to every other rank with one MPI_Allgather over MPI_COMM_WORLD (no rendezvous
// directory). Built without MPI (no SPECSIM_CAR_MPI), the MPI path reports itself unavailable
// and callers keep the Unix-socket rendezvous.
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "car_rendezvous.h"
#include "custom_allreduce.h"
#include "util/mpi_launcher.h"

#ifdef SPECSIM_CAR_MPI
#include <mpi.h>
#endif

namespace specsim::car {

bool built_with_mpi() {
#ifdef SPECSIM_CAR_MPI
  return true;
#else
  return false;
#endif
}

bool launched_by_mpirun() { return mpi_launcher_place().has_value(); }

namespace detail {

namespace {
[[noreturn]] void fail(const std::string& what) { throw std::runtime_error("custom all-reduce MPI exchange: " + what); }
}  // namespace

bool mpi_initialized() {
#ifdef SPECSIM_CAR_MPI
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
#else
  return false;
#endif
}

void mpi_rank_world(int& rank, int& world) {
#ifdef SPECSIM_CAR_MPI
  if (!mpi_initialized()) fail("MPI is not initialized (call MPI_Init before creating the communicator)");
  if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS || MPI_Comm_size(MPI_COMM_WORLD, &world) != MPI_SUCCESS)
    fail("MPI_Comm_rank/MPI_Comm_size failed");
#else
  (void)rank, (void)world;
  fail("this library was built without MPI (find_package(MPI) found none); use the Unix-socket rendezvous");
#endif
}

std::vector<JoinRecord> mpi_exchange(const JoinRecord& mine) {
  int rank = -1, world = 0;
  mpi_rank_world(rank, world);
  // Checked locally before any collective: a caller whose rank or world disagrees with
  // MPI_COMM_WORLD must fail at once, not leave its peers waiting in the Allgather.
  if (mine.rank != rank || mine.world != world)
    fail("called as rank " + std::to_string(mine.rank) + " of " + std::to_string(mine.world) +
         " but MPI_COMM_WORLD says rank " + std::to_string(rank) + " of " + std::to_string(world));
  std::vector<JoinRecord> table(static_cast<std::size_t>(world));
#ifdef SPECSIM_CAR_MPI
  if (MPI_Allgather(&mine, sizeof(JoinRecord), MPI_BYTE, table.data(), sizeof(JoinRecord), MPI_BYTE, MPI_COMM_WORLD) !=
      MPI_SUCCESS)
    fail("MPI_Allgather failed");
#endif
  for (int q = 0; q < world; ++q) {
    const JoinRecord& r = table[static_cast<std::size_t>(q)];
    if (r.magic != kJoinMagic) fail("rank " + std::to_string(q) + " sent a foreign record");
    if (r.world != world || r.rank != q)
      fail("MPI rank " + std::to_string(q) + " joined as rank " + std::to_string(r.rank) + " of " +
           std::to_string(r.world) + ", expected rank " + std::to_string(q) + " of " + std::to_string(world));
  }
  return table;
}

}  // namespace detail
}  // namespace specsim::car
