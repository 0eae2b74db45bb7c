#include "ingest/torch_trace.h"

#include <fmt/format.h>

#include <cctype>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "ingest/text_lines.h"
#include "util/json_io.h"
#include "util/text.h"

namespace specsim::ingest {

std::string_view kernel_kind_name(KernelKind k) {
  constexpr std::string_view names[] = {"nccl_allreduce", "nccl_other", "custom_allreduce",
                                        "gemm",           "attention",  "other"};
  return names[static_cast<int>(k)];
}

namespace {

bool has(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

// `what` at the start of a word (not "scalar_" for "car_").
bool has_word(std::string_view s, std::string_view what) {
  for (std::size_t at = s.find(what); at != std::string_view::npos; at = s.find(what, at + 1))
    if (at == 0 || !(std::isalnum(static_cast<unsigned char>(s[at - 1])))) return true;
  return false;
}

// Line of each event object in the top-level "traceEvents" array (or of a top-level array),
// found by a scan that tracks strings and nesting: nlohmann gives no positions after parsing.
std::vector<std::size_t> event_lines(std::string_view t) {
  std::vector<std::size_t> out;
  std::size_t line = 1;
  int depth = 0, events_depth = -1;
  bool in_str = false, esc = false;
  std::string last_key;  // last string at depth 1 (a key of the root object)
  std::size_t str_start = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '\n') ++line;
    if (in_str) {
      if (esc)
        esc = false;
      else if (c == '\\')
        esc = true;
      else if (c == '"') {
        in_str = false;
        if (depth == 1) last_key = std::string(t.substr(str_start, i - str_start));
      }
      continue;
    }
    if (c == '"')
      in_str = true, str_start = i + 1;
    else if (c == '[' || c == '{') {
      if (c == '[' && depth == 0) events_depth = 1;  // the trace is a bare array of events
      if (c == '[' && depth == 1 && last_key == "traceEvents") events_depth = 2;
      if (c == '{' && depth == events_depth) out.push_back(line);
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
      if (c == ']' && depth + 1 == events_depth) events_depth = -1;
    }
  }
  return out;
}

const std::set<std::string, std::less<>> kKnownCats = {"cpu_op",
                                                       "user_annotation",
                                                       "gpu_user_annotation",
                                                       "cuda_runtime",
                                                       "cuda_driver",
                                                       "python_function",
                                                       "ac2g",
                                                       "fwdbwd",
                                                       "Trace",
                                                       "overhead",
                                                       "cpu_instant_event",
                                                       "Runtime",
                                                       "Kernel",
                                                       "Memcpy",
                                                       "Memset",
                                                       "Memory"};

}  // namespace

KernelKind classify_kernel(std::string_view name) {
  const std::string n = ascii_lower(name);
  if (has(n, "cross_device_reduce") || has(n, "custom_allreduce") || has_word(n, "car_"))
    return KernelKind::CustomAllReduce;
  if (has(n, "nccl")) return has(n, "allreduce") ? KernelKind::NcclAllReduce : KernelKind::NcclOther;
  // Before attention: FlashInfer's grouped GEMMs say "flash".
  if (has(n, "gemm") || has(n, "fused_moe")) return KernelKind::Gemm;
  // FlashInfer's norms, activations and RoPE and vLLM's KV-cache store say "flash" too: not attention.
  if (has(n, "flashinfer::norm") || has(n, "flashinfer::activation") || has(n, "rotary") || has(n, "reshape_and_cache"))
    return KernelKind::Other;
  if (has(n, "flash") || has(n, "mla") || has(n, "attention") || has(n, "attn") || has(n, "fmha") || has(n, "pagedkv"))
    return KernelKind::Attention;
  if (has(n, "cutlass") || has(n, "sm90_xmma") || has(n, "nvjet") || has(n, "cublas")) return KernelKind::Gemm;
  return KernelKind::Other;
}

double TorchTraceSummary::mean_nccl_allreduce_us() const {
  const int i = static_cast<int>(KernelKind::NcclAllReduce);
  return count[i] > 0 ? us[i] / static_cast<double>(count[i]) : 0;
}

namespace {
constexpr double kMaxEventUs = 86400e6;  // one day
}  // namespace

TorchTraceSummary parse_torch_trace(const std::string& text, const std::string& file) {
  if (trim(text).empty()) fail_at(file, 1, "empty file: expected a torch profiler Chrome trace (JSON)");
  check_json_depth(text, file);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    fail_at(file, line_of_offset(text, e.byte > 0 ? e.byte - 1 : 0), "malformed JSON (truncated trace?)");
  } catch (const nlohmann::json::exception& e) {  // e.g. a number overflowing a double
    fail_at(file, 1, std::string("unreadable JSON: ") + e.what());
  }
  const nlohmann::json* events = nullptr;
  if (j.is_array())
    events = &j;
  else if (j.is_object() && j.contains("traceEvents") && j["traceEvents"].is_array())
    events = &j["traceEvents"];
  else
    fail_at(file, 1, "no \"traceEvents\" array: not a Chrome trace");
  const auto lines = event_lines(text);
  auto line_of = [&](std::size_t i) { return i < lines.size() ? lines[i] : std::size_t{1}; };
  TorchTraceSummary s;
  std::set<std::string> steps;
  for (std::size_t i = 0; i < events->size(); ++i) {
    const auto& e = (*events)[i];
    ++s.events;
    if (!e.is_object()) fail_at(file, line_of(i), fmt::format("traceEvents[{}] is not an object", i));
    const std::string cat = e.contains("cat") && e["cat"].is_string() ? e["cat"].get<std::string>() : "";
    const std::string ph = e.contains("ph") && e["ph"].is_string() ? e["ph"].get<std::string>() : "";
    const std::string name = e.contains("name") && e["name"].is_string() ? e["name"].get<std::string>() : "";
    if (name.rfind("ProfilerStep#", 0) == 0) steps.insert(name);
    const bool kernel = cat == "kernel" || cat == "Kernel";
    const bool copy = cat == "gpu_memcpy" || cat == "gpu_memset";
    if ((kernel || copy) && ph == "X") {
      if (name.empty() || !e.contains("ts") || !e["ts"].is_number() || !e.contains("dur") || !e["dur"].is_number())
        fail_at(file, line_of(i), fmt::format("GPU event traceEvents[{}] lacks a name, ts or dur", i));
      const double dur = e["dur"].get<double>();
      if (!(dur >= 0)) fail_at(file, line_of(i), fmt::format("GPU event traceEvents[{}] has a negative dur", i));
      // A kernel of more than a day is no measurement; sums of such would overflow to inf.
      if (dur > kMaxEventUs)
        fail_at(file, line_of(i),
                fmt::format("GPU event traceEvents[{}] has dur {:g} us, above {:g}", i, dur, kMaxEventUs));
      if (copy) {  // GPU time of the step, counted with "other" (its count, total and names agree)
        ++s.memcpy_memset;
        ++s.count[static_cast<int>(KernelKind::Other)];
        s.us[static_cast<int>(KernelKind::Other)] += dur;
        KernelNameStat& n = s.by_name[name];
        n.kind = KernelKind::Other, ++n.count, n.us += dur;
        continue;
      }
      const KernelKind kind = classify_kernel(name);
      const int k = static_cast<int>(kind);
      ++s.kernels, ++s.count[k];
      s.us[k] += dur;
      KernelNameStat& n = s.by_name[name];
      n.kind = kind, ++n.count, n.us += dur;
    } else if (ph == "M" || ph == "s" || ph == "f" || ph == "i" || ph == "C" || kKnownCats.count(cat)) {
      ++s.skipped_known;
    } else {
      ++s.unknown;
    }
  }
  s.steps = static_cast<int>(steps.size());
  if (s.kernels == 0)
    fail_at(file, lines.empty() ? 1 : lines.back(),
            fmt::format("no GPU kernel events (cat \"kernel\", ph \"X\") among {} events", s.events));
  return s;
}

}  // namespace specsim::ingest
