#pragma once
// The physical floors under a small all-reduce, measured in the same run as the benchmark: what
// an empty kernel costs inside a CUDA graph, and how long a flag stored by one GPU into another's
// memory takes to be seen by a kernel polling it there.

#include <cstddef>

namespace specsim::arbench {

/// Empty kernels the node floor compares: no parameters; a parameter block the size of the
/// all-reduce's LaunchArgs; that block launched with programmatic dependent launch (the kernel
/// waits for its predecessor, then lets its successor launch, as the flag-free kernels do).
enum NodeKind { kNodeEmpty, kNodeParams, kNodeParamsPdl, kNodeKinds };
inline constexpr const char* kNodeNames[kNodeKinds] = {"no parameters", "LaunchArgs-sized parameters",
                                                       "LaunchArgs-sized parameters + PDL"};

/// Microseconds per node of a CUDA graph of `nodes` empty kernels on `device` (median of 5 replays).
double empty_graph_node_us(int device, int nodes, int kind = kNodeEmpty);
/// Bytes of the parameter block of kNodeParams (sizeof the all-reduce's LaunchArgs).
int node_param_bytes();

/// SM clock cycles per read of %globaltimer (a chain of `n` dependent reads by one thread).
double timer_read_cycles(int device, int n);

/// Kinds of load the floors compare: ld.global.cg (L2), ld.relaxed.gpu, ld.relaxed.sys,
/// ld.volatile, ld.acquire.sys.
enum LoadKind { kLoadL2, kLoadRelaxedGpu, kLoadRelaxedSys, kLoadVolatile, kLoadAcquireSys, kLoadKinds };
inline constexpr const char* kLoadNames[kLoadKinds] = {"ld.cg", "relaxed.gpu", "relaxed.sys", "volatile",
                                                       "acquire.sys"};

/// Nanoseconds per load of a chain of `n` dependent 32-bit loads of `kind`, by one thread on
/// `device`, of memory owned by `owner` (the same device, or a peer with peer access enabled).
double load_latency_ns(int device, int owner, int kind, int n);

/// One-way latency in microseconds of a flag stored (st.relaxed.sys) by a kernel on `dev_a` into
/// `dev_b`'s memory and seen by a kernel polling it there with loads of `kind`: half the round
/// trip of `round_trips` ping-pongs, timed on the GPU by %globaltimer. Peer access must be enabled
/// both ways. Throws std::runtime_error when a side waits longer than `timeout_s`.
double flag_one_way_us(int dev_a, int dev_b, int round_trips, double timeout_s, int kind = kLoadRelaxedSys);

/// Microseconds per call of the memory traffic of a flag-free one-shot among `ranks` virtual ranks
/// on `device`, alone: a CUDA graph of `nodes` kernels with the flag-free grid (`blocks` per rank of
/// `threads`, programmatic dependent launch), each thread per 16-byte vector of a `bytes` message
/// loading its input, storing it into every peer's slot, loading and refilling (all bits set) the
/// slots of every peer in its own area, and storing its output; no waiting, no checks, no
/// reduction. Sends go to peers 0, 1, ..., or `rotated` to rank+1, rank+2, ... as the kernels do.
/// `copy_only`: input -> output alone. Median of 5 replays.
double ll_traffic_us(int device, int ranks, std::size_t bytes, int blocks, int threads, bool copy_only, bool rotated,
                     int nodes = 200);
/// The same for one-shot-ll-bcast's traffic: each thread loads its input, stores it once into its
/// rank's own area, loads the vector of every peer's area (sequence rank+1, rank+2, ...), refills
/// (all bits set) the vector of its own area's other slot, and stores its output.
double bcast_traffic_us(int device, int ranks, std::size_t bytes, int blocks, int threads, int nodes = 200);

/// The fused all-reduce + add + RMSNorm's floors on `ranks` virtual ranks (a row of `hidden`
/// elements split over `parts` CTAs of `threads` threads, `tokens` rows, one CTA a row slice, grid
/// (tokens x parts, ranks) as the fused kernel's): what its extra over the all-reduce alone cannot
/// go below.
/// Loads and stores alone (no waiting, no reduction), us per call in a graph of `nodes` (PDL):
/// one-shot-ll's on the fused grid, and with `norm` the fused kernel's besides (the residual and
/// weight loads, the new residual's store).
double fused_traffic_us(int device, int ranks, std::size_t hidden, std::size_t tokens, int parts, int threads,
                        bool norm, int nodes = 200);
/// The row sums the fused kernel's variants run after the reduce, alone: every CTA of a row
/// publishes a partial and waits for its siblings' (the kernels' own functions), us per call in a
/// graph of `nodes` (PDL). kRowSumNone: each CTA folds its own warps only (the barrier and fold
/// every variant has); kRowSumSplit: words in global memory; kRowSumClusterPush: distributed
/// shared memory and one cluster barrier (a cluster of `parts` CTAs). Throws if a wait times out.
enum RowSumKind { kRowSumNone, kRowSumSplit, kRowSumClusterPush, kRowSumKinds };
inline constexpr const char* kRowSumNames[kRowSumKinds] = {"own partial only", "split (words in global memory)",
                                                           "cluster-push (shared memory, cluster barrier)"};
double row_sum_us(int device, int ranks, std::size_t tokens, int parts, int threads, int kind, int nodes = 200);

}  // namespace specsim::arbench
