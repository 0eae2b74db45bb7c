#pragma once
// Which of SGLang's speculative workers a server runs, by release (docs/sources.md#S-stack-flags):
//  - before v0.5.11 the v1 worker (EAGLEWorker, overlap scheduling off), unless
//    SGLANG_ENABLE_SPEC_V2 is on (from v0.5.5): then the spec-v2 worker, overlap forced on;
//  - v0.5.11-v0.5.12 spec v2 with overlap by default; v1 with top-k > 1, with
//    --disable-overlap-schedule or with SGLANG_ENABLE_SPEC_V2 off;
//  - from v0.5.13 spec v2 only (the v1 worker removed): without overlap under
//    --disable-overlap-schedule (or, in v0.5.13, SGLANG_ENABLE_SPEC_V2 off).
// models/runtime/sglang.json prices v1, models/runtime/sglang-spec-v2.json v2 with overlap.
#include <optional>
#include <string>
#include <vector>

#include "ingest/sglang_server_args.h"
#include "scenario/command_flags.h"
#include "scenario/resolve.h"
#include "scenario/run_spec.h"

namespace specsim {

inline constexpr const char* kSglangSpecV2Default = "v0.5.11";  ///< spec v2 with overlap the default
inline constexpr const char* kSglangSpecV1Removed = "v0.5.13";  ///< the v1 worker gone
inline constexpr const char* kSglangSpecV2EnvRemoved = "v0.5.14";
inline constexpr const char* kSglangSpecV2Runtime = "sglang-spec-v2";  ///< models/runtime/ profile of V2Overlap

enum class SglangSpecWorker {
  V1,         ///< EAGLEWorker: sglang.json
  V2Overlap,  ///< EAGLEWorkerV2 with the overlap scheduler: sglang-spec-v2.json
  V2Sync,     ///< EAGLEWorkerV2 without overlap: priced on sglang.json's (synchronous) terms
  Refused,    ///< SGLang itself refuses the settings
};

struct SglangWorkerChoice {
  SglangSpecWorker worker = SglangSpecWorker::V1;
  std::string why;  ///< in words: "v0.5.14's only speculative worker", "top-k 4 > 1 in v0.5.12", ...
};

/// The worker a speculative server of `release` ("" for v0.5.2, the pinned release) runs with this
/// top-k, --disable-overlap-schedule and SGLANG_ENABLE_SPEC_V2 (nullopt: not set).
SglangWorkerChoice sglang_spec_worker(const std::string& release, int topk, bool disable_overlap,
                                      std::optional<bool> env_spec_v2);

/// The same for a server log: `disable_overlap_schedule` as its server_args line shows it, after
/// SGLang has applied the speculative rules (off there means the server overlapped).
SglangWorkerChoice sglang_log_spec_worker(const std::string& release, const ingest::ServerArgs& sa);

/// The note that says a spec-v2 worker (V2Overlap or V2Sync) prices the run, and with what.
std::string sglang_v2_worker_note(const SglangWorkerChoice& w);

/// A run dated by --sglang-release alone (no --runtime, no pasted command): the runtime profile of
/// the speculative worker that release runs where it is not sglang.json's (nullopt otherwise), its
/// note added to `notes` for either spec-v2 worker.
std::optional<std::string> sglang_release_runtime(const RunSpec& run, std::vector<std::string>& notes);

/// --sglang-release as specsim reads it: "0.5.14", "v0.5.14" and "v0.5.14.post1" are "v0.5.14";
/// "" for v0.5.2, the pinned release. InputError naming --sglang-release for a release outside
/// v0.5.2 to the newest the flag tables know.
std::string normalized_sglang_release(const std::string& given);

/// Dates a pasted SGLang command: --sglang-release as given (InputError when the command holds a
/// flag of a later release), else the release its later flags date it to (unset if none).
void date_sglang_command(const CommandFlags& c, RunArgs& a);

/// A pasted speculative SGLang command (`a`: its flags merged with specsim's): V2Overlap prices
/// with kSglangSpecV2Runtime unless --runtime was given, V2Sync on sglang.json's terms; either
/// says so in `notes`. InputError where SGLang refuses to start (spec v2 with top-k > 1 before v0.5.11).
void choose_sglang_spec_worker(const CommandFlags& c, RunArgs& a, std::vector<std::string>& notes);

}  // namespace specsim
