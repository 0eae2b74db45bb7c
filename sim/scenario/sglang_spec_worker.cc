#include "scenario/sglang_spec_worker.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "scenario/sglang_cmdline.h"
#include "scenario/stack_flag_table.h"
#include "util/error.h"
#include "util/text.h"

namespace specsim {

namespace {

// "SGLang v0.5.14" or, for an undated command or log, the pinned release's name.
std::string release_name(const std::string& release) {
  return "SGLang " + (release.empty() ? std::string("v0.5.2") : release);
}

// The first flag of the command that dates it to `release`.
std::string newest_flag_of(const CommandFlags& c, const std::string& release) {
  for (const auto& f : c.flags)
    if (f.since == release) return f.given;
  return "";
}

// SGLANG_ENABLE_SPEC_V2 as the command sets it, read as SGLang's EnvBool reads it (environment.csv
// refuses any other value before this is asked).
std::optional<bool> env_spec_v2(const CommandFlags& c) {
  std::optional<bool> on;
  for (const auto& f : c.flags) {
    if (f.row || f.given != "SGLANG_ENABLE_SPEC_V2") continue;
    const std::string v = ascii_lower(f.last());
    on = v == "1" || v == "true" || v == "yes" || v == "y";
  }
  return on;
}

}  // namespace

std::string normalized_sglang_release(const std::string& given) {
  std::string r = given;
  if (!r.empty() && r[0] != 'v') r = "v" + r;
  if (const auto post = r.find(".post"); post != std::string::npos) r.resize(post);  // pip's post releases
  const std::string newest = stack_flag_table("sglang").newer_release;
  const bool shaped = r.size() > 1 && std::count(r.begin(), r.end(), '.') == 2 &&
                      std::all_of(r.begin() + 1, r.end(),
                                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
  if (!shaped || !release_at_least(r, "v0.5.2") || !release_at_least(newest, r))
    throw InputError("'" + given + "' is not an SGLang release specsim knows: give v0.5.2 to " + newest,
                     "--sglang-release");
  return r == "v0.5.2" ? "" : r;
}

SglangWorkerChoice sglang_spec_worker(const std::string& release, int topk, bool disable_overlap,
                                      std::optional<bool> env_spec_v2) {
  const std::string rel = release_name(release);
  const bool v2_default = !release.empty() && release_at_least(release, kSglangSpecV2Default);
  if (!v2_default) {
    if (!env_spec_v2.value_or(false)) return {SglangSpecWorker::V1, rel + " runs the v1 worker by default"};
    // the variable exists from v0.5.5: it dates an undated command to v0.5.5-v0.5.10
    const std::string opted = release.empty() ? "SGLang v0.5.5-v0.5.10" : rel;
    if (topk > 1)
      return {SglangSpecWorker::Refused, fmt::format("{} refuses spec v2 (SGLANG_ENABLE_SPEC_V2 on) with top-k {}: "
                                                     "it takes top-k 1 only",
                                                     opted, topk)};
    return {SglangSpecWorker::V2Overlap, opted + " with SGLANG_ENABLE_SPEC_V2 on (overlap scheduling forced on)"};
  }
  if (!release_at_least(release, kSglangSpecV1Removed)) {  // v0.5.11-v0.5.12: v1 still there
    if (topk > 1) return {SglangSpecWorker::V1, fmt::format("{} runs top-k {} on the v1 worker", rel, topk)};
    if (env_spec_v2 && !*env_spec_v2) return {SglangSpecWorker::V1, rel + " with SGLANG_ENABLE_SPEC_V2 off"};
    if (disable_overlap) return {SglangSpecWorker::V1, rel + " with --disable-overlap-schedule"};
    return {SglangSpecWorker::V2Overlap, rel + ": the default from " + std::string(kSglangSpecV2Default)};
  }
  if (disable_overlap) return {SglangSpecWorker::V2Sync, rel + " with --disable-overlap-schedule"};
  if (!release_at_least(release, kSglangSpecV2EnvRemoved) && env_spec_v2 && !*env_spec_v2)
    return {SglangSpecWorker::V2Sync, rel + " with SGLANG_ENABLE_SPEC_V2 off"};
  return {SglangSpecWorker::V2Overlap, rel + ": the only speculative worker from " + std::string(kSglangSpecV1Removed)};
}

SglangWorkerChoice sglang_log_spec_worker(const std::string& release, const ingest::ServerArgs& sa) {
  const int topk = sa.speculative_eagle_topk.value_or(1);
  // The logged disable_overlap_schedule is the one SGLang settled on: before v0.5.11 it is off for
  // a speculative server only with SGLANG_ENABLE_SPEC_V2 on; v0.5.11-v0.5.12 turn it on for the v1 worker,
  // v0.5.13 for the variable off (speculative_hook.py).
  const bool v2_default = !release.empty() && release_at_least(release, kSglangSpecV2Default);
  const std::optional<bool> env = v2_default ? std::nullopt : std::optional<bool>(!sa.disable_overlap_schedule);
  return sglang_spec_worker(release, v2_default ? topk : 1, sa.disable_overlap_schedule, env);
}

std::string sglang_v2_worker_note(const SglangWorkerChoice& w) {
  if (w.worker == SglangSpecWorker::V2Overlap)
    return "the speculative worker is spec v2 with overlap scheduling (" + w.why +
           "), priced with models/runtime/sglang-spec-v2.json (counted from the code, not measured)";
  return "the speculative worker is spec v2 without overlap scheduling (" + w.why +
         "), priced on the v1 worker's synchronous terms (models/runtime/sglang.json): no profile of its own";
}

std::optional<std::string> sglang_release_runtime(const RunSpec& run, std::vector<std::string>& notes) {
  if (!run.speculative() || run.sglang_release.empty()) return std::nullopt;
  const SglangWorkerChoice w =
      sglang_spec_worker(run.sglang_release, run.topk, run.disable_overlap_schedule, std::nullopt);
  if (w.worker != SglangSpecWorker::V2Overlap && w.worker != SglangSpecWorker::V2Sync) return std::nullopt;
  notes.push_back(sglang_v2_worker_note(w));
  return w.worker == SglangSpecWorker::V2Overlap ? std::optional<std::string>(kSglangSpecV2Runtime) : std::nullopt;
}

void date_sglang_command(const CommandFlags& c, RunArgs& a) {
  const std::string dated = sglang_command_release(c);
  if (!a.sglang_release) {
    if (!dated.empty()) a.sglang_release = dated, a.sglang_release_dated = true;
    return;
  }
  const std::string given = normalized_sglang_release(*a.sglang_release);
  if (!dated.empty() && !release_at_least(given.empty() ? "v0.5.2" : given, dated))
    throw InputError("the command holds flags of SGLang " + dated + " (" + newest_flag_of(c, dated) +
                         "), later than --sglang-release " + *a.sglang_release + ": give " + dated + " or later",
                     "--sglang-release");
}

void choose_sglang_spec_worker(const CommandFlags& c, RunArgs& a, std::vector<std::string>& notes) {
  date_sglang_command(c, a);
  const bool stated = a.sglang_release && !a.sglang_release_dated;  // else the flags' date: a lower bound
  if (!a.algorithm || ascii_lower(*a.algorithm) == "none") return;
  const std::string release = normalized_sglang_release(a.sglang_release.value_or("v0.5.2"));
  const std::optional<bool> env = env_spec_v2(c);
  const SglangWorkerChoice w = sglang_spec_worker(release, a.topk.value_or(1), a.disable_overlap_schedule, env);
  if (env && !release.empty() && release_at_least(release, kSglangSpecV2EnvRemoved))
    notes.push_back(std::string("SGLANG_ENABLE_SPEC_V2 is gone from SGLang ") + kSglangSpecV2EnvRemoved + " (" +
                    release + " here): not read");
  switch (w.worker) {
    case SglangSpecWorker::Refused:
      throw InputError(w.why + "; drop SGLANG_ENABLE_SPEC_V2 or give --speculative-eagle-topk 1",
                       c.where + ": SGLANG_ENABLE_SPEC_V2");
    case SglangSpecWorker::V1:
      if (!a.runtime) a.runtime = "sglang";  // chosen here, with the command's environment
      // flags date the command to this release or a later one: from v0.5.13 it would run spec v2
      if (!release.empty() && release_at_least(release, kSglangSpecV2Default))
        notes.push_back("the speculative worker is v1 (" + w.why + "), priced with models/runtime/sglang.json" +
                        (stated ? std::string()
                                : std::string("; the flags date the command to ") + release + " or later, and from " +
                                      kSglangSpecV1Removed + " SGLang runs it on spec v2 (--sglang-release " +
                                      kSglangSpecV1Removed + " or later prices that)"));
      return;
    case SglangSpecWorker::V2Sync:
      if (!a.runtime) a.runtime = "sglang";
      notes.push_back(sglang_v2_worker_note(w));
      return;
    case SglangSpecWorker::V2Overlap:
      if (a.runtime && *a.runtime != kSglangSpecV2Runtime) {
        notes.push_back("the speculative worker is spec v2 with overlap scheduling (" + w.why + "); --runtime " +
                        *a.runtime + " prices it as given");
        return;
      }
      a.runtime = kSglangSpecV2Runtime;
      notes.push_back(sglang_v2_worker_note(w));
      return;
  }
}

}  // namespace specsim
