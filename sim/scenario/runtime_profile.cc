#include "scenario/runtime_profile.h"

#include <cctype>
#include <cmath>
#include <set>

#include "scenario/paths.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

using nlohmann::json;

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

double non_negative(const json& obj, const std::string& key, const std::string& where) {
  const double v = sourced_number(obj, key, where);
  if (!std::isfinite(v) || v < 0) throw InputError("must be a finite number >= 0", where + "." + key + ".value");
  return v;
}

int count_field(const json& t, const char* key, const std::string& where) {
  if (!t.contains(key)) return 0;
  const int n = json_int(t, key, where);
  if (n < 0) throw InputError("must be >= 0", where + "." + key);
  return n;
}

RuntimeTerm parse_term(const std::string& name, const json& sec, RuntimeTerm::Section section,
                       const std::string& prefix) {
  const json& t = sec.at(name);
  const std::string where = prefix + "." + name;
  if (!t.is_object()) throw InputError("a term must be an object", where);
  RuntimeTerm r;
  r.name = name;
  r.section = section;
  r.value_us = non_negative(sec, name, prefix);
  if (ends_with(name, "_us_per_accepted_token"))
    r.per = RuntimeTerm::Per::AcceptedToken;
  else if (ends_with(name, "_us_per_token"))
    r.per = RuntimeTerm::Per::Token;
  else if (ends_with(name, "_us_per_request"))
    r.per = RuntimeTerm::Per::Request;
  else if (!ends_with(name, "_us"))
    throw InputError("a term's name must end in _us, _us_per_token, _us_per_accepted_token or _us_per_request", where);
  const std::string kind = json_string(t, "kind", where);
  if (kind != "host" && kind != "gpu")
    throw InputError("kind must be host or gpu, got '" + kind + "'", where + ".kind");
  r.host = kind == "host";
  const std::string phase = json_string(t, "phase", where);
  if (phase == "cycle")
    r.cycle_phase = true;
  else
    r.phase = parse_phase(phase, where + ".phase");
  r.graphed = json_bool(t, "graphed", where);
  r.kernels = count_field(t, "kernels", where);
  r.syncs = count_field(t, "syncs", where);
  if (t.contains("counted_by_forward")) r.counted_by_forward = json_bool(t, "counted_by_forward", where);
  r.source = json_string(t, "source", where);
  // fitted to a published run rather than counted from the stack's code: said with the run's
  // caution (ScenarioResult::fitted_host_share); a note that says "fitted" must carry the field
  r.fitted = t.contains("fitted") && json_bool(t, "fitted", where);
  if (!r.fitted && t.contains("note") && json_string(t, "note", where).rfind("fitted", 0) == 0)
    throw InputError("a term whose note says it is fitted needs \"fitted\": true", where);
  if (t.contains("when")) {
    const std::string when = json_string(t, "when", where);
    if (when == "sampling")
      r.when = RuntimeTerm::When::Sampling;
    else if (when == "tree")
      r.when = RuntimeTerm::When::Tree;
    else if (when == "eagle3")
      r.when = RuntimeTerm::When::Eagle3;
    else if (when == "draft_vocab_map")
      r.when = RuntimeTerm::When::DraftVocabMap;
    else if (when == "flashinfer")
      r.when = RuntimeTerm::When::FlashInfer;
    else
      throw InputError(
          "when must be 'sampling', 'tree', 'eagle3', 'draft_vocab_map' or 'flashinfer', got '" + when + "'",
          where + ".when");
  }
  if (t.contains("vocab_basis")) {
    r.vocab_basis = json_double(t, "vocab_basis", where);
    if (!std::isfinite(r.vocab_basis) || r.vocab_basis <= 0) throw InputError("must be > 0", where + ".vocab_basis");
  }
  if (section == RuntimeTerm::Section::DraftStep) {
    const std::string times = json_string(t, "times", where);
    if (times == "steps")
      r.times = RuntimeTerm::Times::Steps;
    else if (times == "draft_forwards")
      r.times = RuntimeTerm::Times::DraftForwards;
    else
      throw InputError("times must be steps or draft_forwards, got '" + times + "'", where + ".times");
  }
  return r;
}

// Optional `host_overlaps_forward`: {draft_decode|verify|draft_extend: bool, not_on_flashinfer:
// [phase...], source, note}. The plain step's overlap is `overlap_scheduler.plain_decode`, so
// baseline_decode is refused here.
struct HostOverlap {
  std::array<bool, kNumPhaseKinds> on{}, lost_on_flashinfer{};
};
HostOverlap parse_host_overlap(const json& j, const std::string& f) {
  HostOverlap out;
  const std::string where = f + "host_overlaps_forward";
  if (!j.contains("host_overlaps_forward")) return out;
  const json& o = j.at("host_overlaps_forward");
  if (!o.is_object()) throw InputError("must be an object", where);
  if (json_string(o, "source", where).empty()) throw InputError("must not be empty", where + ".source");
  auto speculative_phase = [&](const std::string& name, const std::string& at) {
    const PhaseKind k = parse_phase(name, at);
    if (k == PhaseKind::BaselineDecode)
      throw InputError("the plain step's overlap is overlap_scheduler.plain_decode", at + ".baseline_decode");
    return static_cast<int>(k);
  };
  for (const auto& item : o.items()) {
    if (item.key() == "source" || item.key() == "note" || item.key() == "not_on_flashinfer") continue;
    out.on[speculative_phase(item.key(), where)] = json_bool(o, item.key(), where);
  }
  if (o.contains("not_on_flashinfer")) {
    const std::string at = where + ".not_on_flashinfer";
    if (!o.at("not_on_flashinfer").is_array()) throw InputError("must be a list of phases", at);
    for (const auto& name : o.at("not_on_flashinfer")) {
      if (!name.is_string()) throw InputError("must be a list of phases", at);
      const int i = speculative_phase(name.get<std::string>(), at);
      if (!out.on[i]) throw InputError("'" + name.get<std::string>() + "' does not overlap to begin with", at);
      out.lost_on_flashinfer[i] = true;
    }
  }
  return out;
}

// A profile that names a `base` profile is that profile with its `replace` terms
// ({section: {term: {...}}}, each a term the base has) and its own runtime and applies_to: an
// earlier release that differs in a few terms.
json with_base(const json& j, const std::string& f) {
  if (!j.contains("base")) return j;
  // what a profile on a base may give besides its terms: these replace the base's whole
  static const std::set<std::string> kOwn = {"runtime",    "applies_to",        "description",          "note",
                                             "cuda_graph", "overlap_scheduler", "host_overlaps_forward"};
  for (const auto& [key, v] : j.items())  // anything else would be silently the base's
    if (key != "base" && key != "replace" && kOwn.count(key) == 0)
      throw InputError("a profile on a base holds base, replace (its terms) and " +
                           std::string("runtime, applies_to, description, note, cuda_graph, overlap_scheduler, "
                                       "host_overlaps_forward; '") +
                           key + "' would be ignored",
                       f + key);
  const std::string base = json_string(j, "base", f);
  const std::string base_path = models_dir() + "/runtime/" + base + ".json";
  if (!is_file(base_path)) throw InputError("no runtime profile '" + base + "' in models/runtime/", f + "base");
  json merged = read_json_file(base_path);
  if (merged.contains("base")) throw InputError("a base profile cannot name a base of its own", f + "base");
  if (!j.contains("replace") || !j.at("replace").is_object()) throw InputError("missing object", f + "replace");
  for (const auto& [section, terms] : j.at("replace").items()) {
    if (!merged.contains(section) || !merged.at(section).is_object() || !terms.is_object())
      throw InputError("'" + section + "' is not a section of terms of " + base, f + "replace");
    for (const auto& [name, term] : terms.items()) {
      if (!merged.at(section).contains(name))
        throw InputError("'" + name + "' is not a term of " + base + "'s " + section, f + "replace." + section);
      merged[section][name] = term;
    }
  }
  for (const auto& key : kOwn)
    if (j.contains(key)) merged[key] = j.at(key);
  return merged;
}

}  // namespace

RuntimeProfile load_runtime_profile(const std::string& name_or_path, const std::string& flag) {
  const bool is_path = ends_with(name_or_path, ".json");
  const std::string path = is_path ? name_or_path : models_dir() + "/runtime/" + name_or_path + ".json";
  if (!is_file(path))
    throw InputError(
        "no runtime profile '" + name_or_path + "' (models/runtime/ has sglang, sglang-spec-v2, vllm and vllm-0.10)",
        flag);
  const std::string shown = is_path ? path : "models/runtime/" + name_or_path + ".json";  // as errors name it
  const std::string f = shown + ":";
  const json read = read_json_file(path);
  if (!read.is_object()) throw InputError("a runtime profile must be a JSON object", f + "(top)");
  const json j = with_base(read, f);
  RuntimeProfile p;
  p.name = json_string(j, "runtime", f);
  p.file = shown;
  if (j.contains("applies_to")) p.applies_to = json_string(j, "applies_to", f);
  if (!j.contains("assumptions") || !j.at("assumptions").is_object())
    throw InputError("missing object", f + "assumptions");
  const json& a = j.at("assumptions");
  p.host_op_us = non_negative(a, "host_op_us", f + "assumptions");
  p.graphed_kernel_us = non_negative(a, "graphed_small_kernel_us", f + "assumptions");
  p.eager_kernel_gpu_us = non_negative(a, "eager_small_kernel_gpu_us", f + "assumptions");
  p.reference_mem_bw_gbps = non_negative(a, "reference_mem_bw_gbps", f + "assumptions");
  if (p.reference_mem_bw_gbps <= 0 || p.host_op_us <= 0 || p.graphed_kernel_us <= 0 || p.eager_kernel_gpu_us <= 0)
    throw InputError("per-op costs must be > 0", f + "assumptions");
  p.host_scale = j.contains("host_scale") ? non_negative(j, "host_scale", f) : 1.0;
  if (!j.contains("overlap_scheduler") || !j.at("overlap_scheduler").is_object())
    throw InputError("missing object", f + "overlap_scheduler");
  p.overlap_plain_decode = json_bool(j.at("overlap_scheduler"), "plain_decode", f + "overlap_scheduler");
  const HostOverlap overlap = parse_host_overlap(j, f);
  p.host_overlaps_forward = overlap.on;
  p.overlap_lost_on_flashinfer = overlap.lost_on_flashinfer;
  const std::pair<const char*, RuntimeTerm::Section> sections[] = {
      {"per_draft_step", RuntimeTerm::Section::DraftStep},
      {"per_cycle", RuntimeTerm::Section::Cycle},
      {"per_plain_decode_step", RuntimeTerm::Section::PlainStep}};
  for (const auto& [key, section] : sections) {
    if (!j.contains(key) || !j.at(key).is_object()) throw InputError("missing object", f + key);
    for (const auto& item : j.at(key).items()) p.terms.push_back(parse_term(item.key(), j.at(key), section, f + key));
  }
  for (const auto& t : p.terms) {
    const bool plain = t.section == RuntimeTerm::Section::PlainStep;
    if (plain != (!t.cycle_phase && t.phase == PhaseKind::BaselineDecode))
      throw InputError("per_plain_decode_step terms and only they have phase baseline_decode", f + t.name + ".phase");
  }
  return p;
}

bool is_vllm_runtime(const std::string& name) {
  if (ends_with(name, ".json")) {  // a profile file: its own runtime field (a bad file is reported when loaded)
    try {
      const json j = read_json_file(name);
      return j.is_object() && j.value("runtime", std::string()) == "vllm";
    } catch (const InputError&) {
      return false;
    }
  }
  std::string n;
  for (char c : name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return n == "vllm" || n.rfind("vllm-", 0) == 0;
}

}  // namespace specsim
