#include "scenario/run_spec.h"

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "scenario/custom_ar_policy.h"
#include "scenario/flag_ranges.h"
#include "scenario/sglang_draft_rule.h"
#include "util/error.h"
#include "util/text.h"

namespace specsim {

std::string_view phase_name(PhaseKind p) {
  constexpr std::string_view names[] = {"draft_decode", "verify", "draft_extend", "baseline_decode"};
  return names[static_cast<int>(p)];
}

PhaseKind parse_phase(std::string_view s, const std::string& where) {
  for (int i = 0; i < kNumPhaseKinds; ++i)
    if (s == phase_name(static_cast<PhaseKind>(i))) return static_cast<PhaseKind>(i);
  throw InputError("unknown phase '" + std::string(s) + "': use draft_decode, verify, draft_extend, baseline_decode",
                   where);
}

std::string_view algo_name(SpecAlgo a) {
  switch (a) {
    case SpecAlgo::None: return "NONE";
    case SpecAlgo::Eagle: return "EAGLE";
    case SpecAlgo::Eagle3: return "EAGLE3";
    case SpecAlgo::NextN: return "NEXTN";
  }
  return "NONE";
}

void apply_draft_shape(RunSpec& r, std::optional<int> topk, std::optional<int> steps, std::optional<int> draft_tokens) {
  if (topk) r.topk = *topk;
  if (steps) r.num_steps = *steps;
  if (draft_tokens) r.num_draft_tokens = *draft_tokens;
  if (r.topk == 1) {  // a chain: SGLang verifies every drafted token plus the bonus one
    if (steps && !draft_tokens) r.num_draft_tokens = r.num_steps + 1;
    if (draft_tokens && !steps) r.num_steps = r.num_draft_tokens - 1;
    // a tree narrowed to a chain keeps its depth
    if (topk && !steps && !draft_tokens) r.num_draft_tokens = r.num_steps + 1;
  }
}

std::string AllReduceChoice::kind_name() const {
  switch (kind) {
    case Kind::Nccl: return "nccl";
    case Kind::Custom: return "custom";
    case Kind::Fixed: return "fixed";
    case Kind::Registered: return name;
  }
  return "nccl";
}

std::string AllReduceChoice::label() const {
  if (scoped) {
    AllReduceChoice all = *this;
    all.scoped = false;
    std::string s = all.label() + "@";
    bool first = true;
    for (int i = 0; i < kNumPhaseKinds; ++i)
      if (phases[i]) s += (first ? "" : ",") + std::string(phase_name(static_cast<PhaseKind>(i))), first = false;
    return s;
  }
  if (kind == Kind::Fixed) {
    return "fixed:" + fmt::format("{}", fixed_us);  // the shortest text that reads back as the same number
  }
  if (kind == Kind::Custom && fused_norm) return "custom:fused";
  if (kind == Kind::Custom && variant != "auto") return "custom:" + variant;
  if (kind == Kind::Registered && !arg.empty()) return name + ":" + arg;
  return kind_name();
}

namespace {
AllReduceChoice parse_unscoped(std::string_view s, const std::string& where);
}

AllReduceChoice parse_allreduce(std::string_view s, const std::string& where) {
  const auto at = s.find('@');
  // backend names in any case, as the NCCL flags take theirs (NCCL, Custom:Fused)
  const std::string lower = ascii_lower(std::string(s));
  const std::string backend = lower.substr(0, at);
  if (at == std::string_view::npos) return parse_unscoped(backend, where);
  AllReduceChoice c = parse_unscoped(backend, where);
  c.scoped = true;
  c.phases = {};
  std::string_view rest = std::string_view(lower).substr(at + 1);
  if (rest.empty()) throw InputError("BACKEND@PHASES needs phases after '@' (e.g. fixed:40@verify)", where);
  for (bool more = true; more;) {  // every comma-separated name must be a phase, none empty
    const auto comma = rest.find(',');
    c.phases[static_cast<int>(parse_phase(rest.substr(0, comma), where))] = true;
    more = comma != std::string_view::npos;
    if (more) rest = rest.substr(comma + 1);
  }
  return c;
}

namespace {
AllReduceChoice parse_unscoped(std::string_view s, const std::string& where) {
  AllReduceChoice c;
  if (s == "nccl") return c;
  if (s == "custom") {
    c.kind = AllReduceChoice::Kind::Custom;
    return c;
  }
  if (s == "custom:fused") {
    c.kind = AllReduceChoice::Kind::Custom;
    c.fused_norm = true;
    return c;
  }
  if (s.rfind("custom:", 0) == 0) {
    c.kind = AllReduceChoice::Kind::Custom;
    c.variant = std::string(s.substr(7));
    if (!car_policy::parse_variant(c.variant))
      throw InputError("unknown custom all-reduce variant '" + c.variant + "': use " + car_policy::variant_names(),
                       where);
    return c;
  }
  if (s.rfind("fixed:", 0) == 0) {
    c.kind = AllReduceChoice::Kind::Fixed;
    const std::string num(s.substr(6));
    size_t used = 0;
    try {
      c.fixed_us = std::stod(num, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != num.size() || !std::isfinite(c.fixed_us) || c.fixed_us <= 0 || c.fixed_us > 1e7)
      throw InputError("fixed:US needs a latency in microseconds in (0, 1e7], got '" + num + "'", where);
    return c;
  }
  // A backend registered by name (a plugin or a test's): looked up, and refused if unknown, when
  // it is costed. Names are lower-case words, so typos of the built-ins still fail here.
  const std::string_view name = s.substr(0, s.find(':'));
  const bool word = !name.empty() && name[0] >= 'a' && name[0] <= 'z' &&
                    name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_") == std::string_view::npos;
  if (!word || name == "fixed" || name == "nccl")
    throw InputError("unknown all-reduce '" + std::string(s) +
                         "': use nccl, custom[:VARIANT], fixed:US, or the stack's own (sglang, vllm)",
                     where);
  c.kind = AllReduceChoice::Kind::Registered;
  c.name = std::string(name);
  if (name.size() < s.size()) c.arg = std::string(s.substr(name.size() + 1));
  return c;
}

}  // namespace

namespace {
void require(bool ok, const std::string& what, const std::string& where) {
  if (!ok) throw InputError(what, where);
}
void finite_positive(const std::optional<double>& v, const std::string& where) {
  if (v) require(std::isfinite(*v) && *v > 0, "must be a positive finite number", where);
}
}  // namespace

void validate_run(const RunSpec& r) {
  flag_ranges::kTpSize.require(r.tp_size);
  flag_ranges::kNnodes.require(r.nnodes);
  require(r.num_gpus == 0 || r.num_gpus >= r.tp_size, "must be at least the tp size", "--num-gpus");
  flag_ranges::kBatchSize.require(r.batch_size);
  flag_ranges::kContextLen.require(r.context_len);
  flag_ranges::kCudaGraphMaxBs.require(r.cuda_graph_max_bs);
  // the launch command's own limits (kept in a saved scenario)
  if (r.max_running_requests)
    require(r.batch_size <= *r.max_running_requests,
            fmt::format("batch {} exceeds the launch's limit of {} running requests (--max-running-requests, "
                        "--max-num-seqs)",
                        r.batch_size, *r.max_running_requests),
            "--batch-size");
  if (r.max_context_len)
    require(r.context_len <= *r.max_context_len,
            fmt::format("{} tokens of context exceed the launch's limit of {} (--context-length, --max-model-len)",
                        r.context_len, *r.max_context_len),
            "--context-len");
  if (r.max_total_tokens)
    require(double(r.batch_size) * double(r.context_len) <= double(*r.max_total_tokens),
            fmt::format("batch {} x context {} tokens exceed the launch's KV pool of {} tokens (--max-total-tokens): a "
                        "smaller --batch-size or --context-len fits",
                        r.batch_size, r.context_len, *r.max_total_tokens),
            "--batch-size");
  finite_positive(r.measured_baseline_tok_s, "--measured-baseline-tok-s");
  finite_positive(r.measured_allreduce_us, "--measured-allreduce-us");
  finite_positive(r.measured_spec_tok_s, "--measured-spec-tok-s");
  require(!r.allreduce.empty(), "give at least one all-reduce backend", "--allreduce");
  require(r.nccl.p2p_level == "NVL" || r.nccl.p2p_level == "PIX" || r.nccl.p2p_level == "PXB" ||
              r.nccl.p2p_level == "PHB" || r.nccl.p2p_level == "SYS" || r.nccl.p2p_level == "LOC",
          "use LOC, NVL, PIX, PXB, PHB or SYS", "--nccl-p2p-level");
  require(r.nccl.algo_enabled[0] || r.nccl.algo_enabled[1], "enable at least one algorithm", "--nccl-algo");
  require(r.nccl.proto_enabled[0] || r.nccl.proto_enabled[1] || r.nccl.proto_enabled[2], "enable at least one protocol",
          "--nccl-proto");
  if (r.mem_fraction_static)
    require(std::isfinite(*r.mem_fraction_static) && *r.mem_fraction_static > 0 && *r.mem_fraction_static <= 1,
            "must be in (0, 1]", "--mem-fraction-static");
  if (!r.speculative()) {
    require(!r.measured_spec_tok_s, "needs speculation on", "--measured-spec-tok-s");
    return;
  }
  flag_ranges::kNumSteps.require(r.num_steps);
  flag_ranges::kTopk.require(r.topk);
  flag_ranges::kDraftTokens.require(r.num_draft_tokens);
  // SGLang's rule, shared with the acceptance model and `specsim tune`.
  const std::string shape = accept::draft_shape_problem(r.num_steps, r.topk, r.num_draft_tokens);
  require(shape.empty(), shape, "--speculative-num-draft-tokens");
  require(double(r.batch_size) * r.num_draft_tokens <= double(1 << 24), "batch x draft tokens is too large",
          "--batch-size");
  if (r.accept_len) {
    require(std::isfinite(*r.accept_len), "must be a finite number", "--accept-len");
    // A scenario file's accept len measured at another draft shape is bounded by that shape's steps
    // (it is projected to the run's shape before use).
    const int steps = r.accept_len_shape ? (*r.accept_len_shape)[0] : r.num_steps;
    // --accept-from's mean: its source is "SGLang log FILE" or "vLLM log FILE"
    std::string log_file;
    for (const std::string prefix : {"SGLang log ", "vLLM log "})
      if (r.accept_source.rfind(prefix, 0) == 0) log_file = r.accept_source.substr(prefix.size());
    const bool from_log = !log_file.empty();
    if (from_log)
      require(*r.accept_len <= steps + 1,
              fmt::format("its mean accept len {:.3f} is above this run's steps + 1 = {}: the log ran a deeper draft "
                          "(give the settings it ran: --speculative-num-steps, --speculative-eagle-topk, "
                          "--speculative-num-draft-tokens)",
                          *r.accept_len, steps + 1),
              "--accept-from " + log_file);
    require(*r.accept_len >= 1.0 && *r.accept_len <= steps + 1,
            "must be in [1, " + std::to_string(steps + 1) +
                "] (1 bonus token .. one per draft step + 1; a tree accepts at most its depth, the steps)",
            "--accept-len");
  }
  if (r.accept_rate)
    require(std::isfinite(*r.accept_rate) && *r.accept_rate >= 0 && *r.accept_rate < 1, "must be in [0, 1)",
            "--accept-rate");
  require(!(r.accept_len && r.accept_rate), "give --accept-len or --accept-rate, not both", "--accept-rate");
}

}  // namespace specsim
