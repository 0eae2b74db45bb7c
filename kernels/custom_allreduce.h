#pragma once
// Custom all-reduce for small tensors: one-shot pull, one-shot push and two-shot
// kernels, flag-free one-shots (one-shot-ll, one-shot-ll-pull, one-shot-ll-bcast: no barrier,
// readiness travels with the data) and a flag-free two-shot (two-shot-ll), for world sizes 2..8 over NVLink or
// PCIe peer-to-peer, in three buffer modes (virtual ranks on one GPU, one thread per GPU, one
// process per GPU through CUDA IPC).
//
// Contract: every call either reduces correctly on every rank or throws std::runtime_error
// with a message that says why. Unsupported requests are refused on the host before anything
// is launched; a peer that never arrives makes the kernel give up after a bounded wait and the
// host turns the recorded error word into an exception (check()). Plain C++: no device code.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "car_types.h"

namespace specsim::car {

/// `auto`, `one-shot-pull`, `one-shot-push`, `two-shot`, `one-shot-ll`, `one-shot-ll-pull`, `two-shot-ll`,
/// `one-shot-ll-bcast`.
std::string_view to_string(Variant v);
/// `nvlink`, `pcie`.
std::string_view to_string(Link l);
/// Parses the variant names above; nullopt for anything else.
std::optional<Variant> parse_variant(std::string_view name);
/// The kernels' element types by their engine or nccl-tests names: `bf16`/`bfloat16`,
/// `fp16`/`half`/`float16`, `fp32`/`float`/`float32`; nullopt for anything else, fp8 included
/// (no fp8 kernels). Names are specsim::dtype_name's.
std::optional<DType> parse_dtype(std::string_view name);
/// Parses `nvlink` or `pcie`.
std::optional<Link> parse_link(std::string_view name);

/// Picks a concrete variant for a message of `bytes` on `world` ranks over `link`
/// (thresholds and their reasons: kernels/car_select.cc). Never returns Auto.
Variant select_variant(std::size_t bytes, int world, Link link);

/// What a call asks for, reduced to what the refusal logic needs (host-only, testable).
struct CallDesc {
  std::uintptr_t in = 0;            ///< input address (only its value is inspected)
  std::uintptr_t out = 0;           ///< output address
  std::size_t count = 0;            ///< elements per rank
  DType dtype = DType::BF16;        ///< element type
  Variant variant = Variant::Auto;  ///< requested variant
  int world = 0;                    ///< world size of the communicator
  std::size_t max_bytes = 0;        ///< the communicator's per-rank buffer
};

/// Refusal logic: an empty optional when the call is supported, else the reason. Checks world
/// size, count, size against the buffer, pointer alignment, partial in/out overlap, the dtype
/// (fp8 and values outside the enum) and variant values, and messages over kLlMaxBytes for the
/// flag-free variants. Called by allreduce() before anything is launched.
std::optional<std::string> refuse_reason(const CallDesc& call);

/// Bytes of device memory one rank's shared region takes for `world` ranks and `max_bytes`.
std::size_t region_bytes(int world, std::size_t max_bytes);

/// True when this library was built with MPI (the MPI handle exchange exists).
bool built_with_mpi();
/// True when the environment says mpirun (or srun/Hydra) started this process: a consistent launcher
/// size and rank pair (util/mpi_launcher.h), not one stray variable.
bool launched_by_mpirun();

/// Bytes each rank reads plus writes in device memory for one call (the benchmark's "moved").
double moved_bytes_per_rank(Variant v, std::size_t bytes, int world);

/// All-reduce fused with the residual add and RMSNorm (car_fused_norm.cu): per rank, the
/// buffers of one call. `in` holds this rank's partial sums [tokens x hidden]; the call writes
/// residual_out = round(round(sum over ranks of in) + residual_in) and
/// norm_out = round(residual_out * rsqrt(mean(residual_out^2) + eps) * weight), each row over the
/// full hidden size, and, when `quant_out` is set, fp8 e4m3 (saturating) of norm_out / quant_scale.
/// In place: norm_out == in and residual_out == residual_in are allowed; any other overlap of an
/// output with another buffer is refused.
struct FusedNormIo {
  const void* in = nullptr;           ///< partial sums, tokens x hidden (bf16/fp16)
  const void* residual_in = nullptr;  ///< residual before this boundary
  void* residual_out = nullptr;       ///< new residual (in + residual_in)
  const void* weight = nullptr;       ///< RMSNorm weight, hidden elements (every rank's copy equal)
  void* norm_out = nullptr;           ///< normalized output (the next layer's input)
  void* quant_out = nullptr;          ///< optional fp8 e4m3 copy of norm_out / quant_scale
};
/// The shape and constants of a fused call (every rank the same).
struct FusedNormShape {
  std::size_t tokens = 0;     ///< rows
  std::size_t hidden = 0;     ///< elements a row (the norm runs over all of them on every rank)
  DType dtype = DType::BF16;  ///< bf16 or fp16
  float eps = 1e-6f;          ///< RMSNorm epsilon (>= 0, finite)
  float quant_scale = 1.0f;   ///< fp8 scale (finite, > 0), used only with quant_out
};
/// Largest hidden size of the fused kernel: 8 CTAs a row of 256 threads, one vector each.
inline constexpr std::size_t kFusedMaxHidden = 16384;
/// Refusal logic of a fused call (host only, unit-tested): world, shape, dtype, the
/// flag-free message cap and `max_bytes`, eps and scale, pointers and their overlaps.
std::optional<std::string> fused_refuse_reason(const FusedNormIo& io, const FusedNormShape& s, int world,
                                               std::size_t max_bytes);
/// CTAs (one thread-block cluster) that share a row of `hidden` elements in the fused kernel and
/// in the separate add+RMSNorm kernel: 1, 2, 4 or 8, the fewest that leave a CTA at most 128
/// 16-byte vectors (or 8).
int fused_cluster(std::size_t hidden);
/// Threads a CTA of both kernels uses for its slice of a row of `hidden` elements (both use the
/// same split, so their sums of squares add in the same order).
int fused_threads(std::size_t hidden);
/// How the fused kernel splits a row and meets its sum of squares (car_fused_norm.cu); every
/// variant adds in the same order, so all write the same bits. `cluster`: a thread-block cluster
/// of C CTAs a row, partials read through distributed shared memory, a final cluster barrier.
/// `cluster-push`: the same clusters, each CTA's partial written into its siblings' shared memory
/// before the row's one cluster barrier, no final barrier. `block`: no cluster, one CTA of C x
/// threads a row (hidden up to 8192). `split`: no cluster, C CTAs a row, partials through a
/// per-rank word array in global memory. `two-shot` (car_fused_two_shot.cu): the row's C slices
/// each reduced once, by their owner rank, which sends the new residual and the slice's partial
/// to every rank with the all-gather (two hops, no exchange between a row's CTAs after the
/// reduce; residual_in must be the same on every rank, as tensor parallelism keeps it).
/// `auto`: `split` below kFusedTwoShotMinTokens rows, `two-shot` from there (kernels/README.md).
enum class FusedVariant { Cluster, ClusterPush, Block, Split, TwoShot, Auto };
/// Rows from which `auto` runs `two-shot` instead of `split`: on 8 virtual ranks of one H200
/// (graph of 200 calls, hidden 4096/7168/8192) two-shot is 0.4-1.45 us slower at 1 and 3 rows and
/// faster at 8, 16, 32 and 64 (kernels/README.md; 4-7 rows not measured).
inline constexpr std::size_t kFusedTwoShotMinTokens = 8;
/// The variant `v` runs for `tokens` rows (`auto` resolved; any other `v` itself).
FusedVariant resolve_fused_variant(FusedVariant v, std::size_t tokens);
/// Whether `v` runs thread-block clusters (cluster, cluster-push): add_rmsnorm then runs the
/// cluster kernel, else one CTA a row.
inline bool fused_clustered(FusedVariant v) { return v == FusedVariant::Cluster || v == FusedVariant::ClusterPush; }
/// `cluster`, `cluster-push`, `block`, `split`, `two-shot`, `auto`.
std::string_view to_string(FusedVariant v);
/// Parses the names above; nullopt for anything else.
std::optional<FusedVariant> parse_fused_variant(std::string_view name);
/// Why variant `v` cannot run rows of `hidden` elements (block: one CTA of at most 1024 threads a
/// row), or nullopt. fused_refuse_reason's checks come first.
std::optional<std::string> fused_variant_refuse_reason(FusedVariant v, std::size_t hidden);
/// Threads a CTA of variant `v` runs for rows of `hidden` elements (block: fused_cluster(hidden)
/// groups of fused_threads(hidden) in one CTA; the others fused_threads(hidden)).
int fused_cta_threads(FusedVariant v, std::size_t hidden);

/// The unfused second half, for comparison: residual add + RMSNorm (+ optional fp8) of each
/// all-reduce output `io[r].in`, every buffer on the current device, one launch for all 1..8 entries
/// (as the virtual all-reduce drives its ranks); the same arithmetic and order as the fused kernel,
/// so the two agree bitwise. Refused like a fused call (no world or size caps).
/// `v`: the row split (Cluster and ClusterPush: the cluster kernel; Block, Split, TwoShot and Auto: one CTA a row).
void add_rmsnorm(std::span<const FusedNormIo> io, const FusedNormShape& s, cudaStream_t stream,
                 FusedVariant v = FusedVariant::Split);

/// What a fused call launches (Communicator::fused_geometry): the variant, CTAs (or thread
/// groups, for block) a row, threads a CTA, CTAs a rank, and rows each row group handles in turn.
struct FusedGeometry {
  FusedVariant variant = FusedVariant::Cluster;
  int parts = 1;
  int threads = 0;
  int blocks = 0;
  std::size_t rows_per_group = 0;
};

/// Creation options shared by all modes.
struct Options {
  std::size_t max_bytes = kDefaultMaxBytes;      ///< largest accepted message per rank
  std::uint64_t timeout_ns = kDefaultTimeoutNs;  ///< bound on every spin-wait in the kernels
  std::optional<Link> link;                      ///< topology for Auto; detected when empty
  int ll_threads = 0;                            ///< threads a block of the flag-free kernels: 0 auto, or 32..256
  /// Row split of allreduce_add_rmsnorm: auto (split below 8 rows, two-shot from 8: the faster of
  /// the two at every measured shape, kernels/README.md).
  FusedVariant fused_variant = FusedVariant::Auto;
  /// Test hook (virtual mode only): the blocks of this rank return at once without arriving,
  /// so its peers must time out. -1: off.
  int debug_absent_rank = -1;
};

/// One rank (or, in virtual mode, all ranks of one GPU) of a custom all-reduce group.
/// Create once; buffers are registered at creation, so calls are CUDA-graph safe: a captured
/// call replays with no host work (its epochs live in device memory).
class Communicator {
 public:
  /// Virtual-rank mode: `world` ranks' buffers on one device, driven by one launch per call.
  static std::unique_ptr<Communicator> create_virtual(int world, int device, const Options& opt = {});
  /// Single-process mode: one communicator per device in `devices` (rank = index), with
  /// peer access enabled between all pairs; each rank's thread calls allreduce() on its own.
  /// Throws if any pair cannot reach the other's memory.
  static std::vector<std::unique_ptr<Communicator>> create_single_process(std::span<const int> devices,
                                                                          const Options& opt = {});
  /// Multi-process mode: this process is `rank` of `world` on `device`; CUDA IPC handles are
  /// exchanged over a Unix socket in `rendezvous_dir` (rank 0 listens). `tag` separates groups
  /// sharing a directory. Blocks until every rank has joined (or throws after the timeout).
  /// When built with MPI, launched by mpirun (launched_by_mpirun()) and MPI is initialized, the
  /// handles go through MPI_Allgather over MPI_COMM_WORLD instead (the directory is unused;
  /// `rank` and `world` must match MPI_COMM_WORLD, else it throws before communicating).
  static std::unique_ptr<Communicator> create_multi_process(int rank, int world, int device,
                                                            const std::string& rendezvous_dir,
                                                            const std::string& tag = "car", const Options& opt = {},
                                                            double join_timeout_s = 60.0);
  /// Multi-process mode over MPI: rank and world from MPI_COMM_WORLD (MPI_Init first), handles
  /// exchanged with MPI_Allgather. Collective over MPI_COMM_WORLD. Throws when built without
  /// MPI or when MPI is not initialized.
  static std::unique_ptr<Communicator> create_mpi(int device, const Options& opt = {});

  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  /// All-reduce (sum) of `count` elements from `in` into `out` on `stream` (this rank only;
  /// not for virtual mode). Throws std::runtime_error, launching nothing, for an unsupported
  /// request or after an earlier kernel failure. Asynchronous: call check() after the stream
  /// synchronizes to learn whether the kernel timed out. In-place (in == out) is allowed.
  void allreduce(const void* in, void* out, std::size_t count, DType dtype, Variant variant, cudaStream_t stream);
  /// Virtual mode: one launch reduces ins[r] (r < world) into every outs[r].
  void allreduce_virtual(std::span<const void* const> ins, std::span<void* const> outs, std::size_t count, DType dtype,
                         Variant variant, cudaStream_t stream);
  /// All-reduce fused with the residual add and RMSNorm (FusedNormIo): one flag-free kernel on
  /// the slots one-shot-ll uses (calls of both kinds may alternate). Throws, launching nothing,
  /// for a refused call (fused_refuse_reason) or after an earlier kernel failure. Not for
  /// virtual mode.
  void allreduce_add_rmsnorm(const FusedNormIo& io, const FusedNormShape& shape, cudaStream_t stream);
  /// Virtual mode: one launch, io[r] for rank r (r < world).
  void allreduce_add_rmsnorm_virtual(std::span<const FusedNormIo> io, const FusedNormShape& shape, cudaStream_t stream);
  /// The launch shape of a fused call of `shape` (Options::fused_variant); throws for a shape the
  /// variant refuses (fused_variant_refuse_reason).
  FusedGeometry fused_geometry(const FusedNormShape& shape) const;
  FusedVariant fused_variant() const;  ///< Options::fused_variant
  /// Throws the recorded kernel error, if any ("rank 2 waited ... for rank 3 at barrier 0").
  /// Call after the stream (or graph replay) has synchronized.
  void check();
  /// cudaStreamSynchronize(stream) then check().
  void synchronize(cudaStream_t stream);

  /// The concrete variant a call of `bytes` runs with (Auto resolved).
  Variant resolve(Variant v, std::size_t bytes) const;
  int world() const;              ///< world size
  int rank() const;               ///< this rank (0 in virtual mode)
  int device() const;             ///< CUDA device of this rank
  bool is_virtual() const;        ///< virtual-rank mode
  Link link() const;              ///< topology used by Auto
  std::size_t max_bytes() const;  ///< largest accepted message per rank
  /// Blocks per rank the kernel of `v` (Auto resolved) uses for a message of `bytes`.
  int blocks_for(std::size_t bytes, Variant v = Variant::Auto) const;
  /// Threads per block of that kernel (Options::ll_threads, or the flag-free auto choice).
  int threads_for(std::size_t bytes, Variant v = Variant::Auto) const;

  struct Impl;

 private:
  explicit Communicator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace specsim::car
