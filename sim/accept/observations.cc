#include "accept/observations.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <tuple>

#include "ingest/server_log.h"
#include "ingest/text_lines.h"
#include "scenario/flag_ranges.h"
#include "util/bounded_read.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim::accept {

using ingest::fail_at;
using ingest::split_lines;
using ingest::trim;

namespace {

// Per-setting means, in order of first appearance.
std::vector<AcceptObservation> average(const std::vector<AcceptObservation>& raw) {
  std::vector<AcceptObservation> out;
  std::map<std::tuple<int, int, int>, std::pair<std::size_t, int>> index;  // -> (out slot, count)
  for (const auto& o : raw) {
    auto [it, fresh] = index.try_emplace({o.steps, o.topk, o.draft_tokens}, out.size(), 0);
    if (fresh) out.push_back(o), out.back().accept_len = 0;
    out[it->second.first].accept_len += o.accept_len;
    ++it->second.second;
  }
  for (const auto& [k, v] : index) out[v.first].accept_len /= v.second;
  return out;
}

}  // namespace

std::vector<AcceptObservation> observations_from_log(const std::string& text, const std::string& file,
                                                     const StatedSettings* stated, bool* stated_used) {
  const ingest::SglangLog log = ingest::parse_server_log(text, file);
  std::vector<AcceptObservation> raw;
  for (const auto& d : log.decode) {
    if (!d.accept_len) continue;
    if (!d.server_args_index && stated) {
      if (stated_used) *stated_used = true;
      if (*d.accept_len > stated->steps + 1)
        fail_at(file, d.line,
                fmt::format("accept len {:g} above the stated --speculative-num-steps + 1 = {}: the log ran a deeper "
                            "draft (state its steps)",
                            *d.accept_len, stated->steps + 1));
      raw.push_back(
          {stated->steps, stated->topk, stated->draft_tokens, *d.accept_len, fmt::format("{}:{}", file, d.line), ""});
      continue;
    }
    if (!d.server_args_index)
      fail_at(
          file, d.line,
          fmt::format("accept len line without a {} above it: the speculative settings are unknown (keep the "
                      "server's start-up lines in the log, or state the settings it ran with "
                      "--speculative-num-steps, --speculative-eagle-topk and --speculative-num-draft-tokens)",
                      log.stack == "vllm" ? ingest::launch_line_name(log.stack) : "server_args=ServerArgs(...) line"));
    const ingest::ServerArgs& s = log.server_args[*d.server_args_index];
    if (!s.speculative() || !s.speculative_num_steps || !s.speculative_eagle_topk || !s.speculative_num_draft_tokens)
      fail_at(file, s.line,
              log.stack == "vllm" ? "non-default args line without a speculative_config that names "
                                    "num_speculative_tokens"
                                  : "server_args line without speculative_algorithm, speculative_num_steps, "
                                    "speculative_eagle_topk and speculative_num_draft_tokens");
    const std::string at = fmt::format("{}:{}", file, s.line);
    flag_ranges::kNumSteps.require_at(*s.speculative_num_steps, at + ": speculative_num_steps");
    flag_ranges::kTopk.require_at(*s.speculative_eagle_topk, at + ": speculative_eagle_topk");
    flag_ranges::kDraftTokens.require_at(*s.speculative_num_draft_tokens, at + ": speculative_num_draft_tokens");
    raw.push_back({*s.speculative_num_steps, *s.speculative_eagle_topk, *s.speculative_num_draft_tokens, *d.accept_len,
                   fmt::format("{}:{}", file, d.line), s.model_path});
  }
  if (raw.empty())
    throw InputError("no decode line reports an accept len: was speculative decoding on in this log?", file);
  auto out = average(raw);
  for (auto& o : out)
    o.source = stated && log.server_args.empty() ? file + " (settings from " + stated->flags + ")" : file;
  return out;
}

namespace {

std::vector<std::string_view> split_csv(std::string_view line) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0;;) {
    const std::size_t comma = line.find(',', start);
    out.push_back(trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

int whole(double v, const char* what, const std::string& where) {
  if (!std::isfinite(v) || v != std::floor(v) || v < 0 || v > 1e6)
    throw InputError(fmt::format("{} {:g} is not a whole number in 0..1e6", what, v), where);
  return static_cast<int>(v);
}

AcceptObservation row_observation(double steps, double topk, double n, double len, const std::string& where) {
  AcceptObservation o;
  o.steps = whole(steps, "steps", where), o.topk = whole(topk, "topk", where);
  o.draft_tokens = whole(n, "num_draft_tokens", where);
  // Bounded as the flags are: a draft of 1000 steps is no setting SGLang runs, and searching
  // around it would take gigabytes.
  flag_ranges::kNumSteps.require_at(o.steps, where + ": steps");
  flag_ranges::kTopk.require_at(o.topk, where + ": topk");
  flag_ranges::kDraftTokens.require_at(o.draft_tokens, where + ": num_draft_tokens");
  if (!std::isfinite(len)) throw InputError("accept length is not a finite number", where);
  o.accept_len = len, o.source = where;
  return o;
}

}  // namespace

std::vector<AcceptObservation> observations_from_bench(const std::string& text, const std::string& file) {
  const auto lines = split_lines(text);
  std::vector<AcceptObservation> raw;
  std::size_t first = 0;
  while (first < lines.size() && trim(lines[first]).empty()) ++first;
  if (first == lines.size()) fail_at(file, 1, "empty file: expected bench results");
  if (trim(lines[first]).front() == '{') {
    for (std::size_t i = first; i < lines.size(); ++i) {
      if (trim(lines[i]).empty()) continue;
      const std::string where = fmt::format("{}:{}", file, i + 1);
      const nlohmann::json j = parse_json_text(std::string(lines[i]), where);
      if (!j.is_object()) throw InputError("each line must be one JSON object", where);
      const double steps = json_double(j, "steps", where);
      if (steps == 0) continue;  // plain decoding
      raw.push_back(row_observation(steps, json_double(j, "topk", where), json_double(j, "num_draft_tokens", where),
                                    json_double(j, "acc_length", where), where));
    }
  } else {
    const auto header = split_csv(lines[first]);
    auto column = [&](std::initializer_list<std::string_view> names) -> std::size_t {
      for (std::size_t c = 0; c < header.size(); ++c)
        for (const auto n : names)
          if (header[c] == n) return c;
      fail_at(file, first + 1,
              fmt::format("CSV header lacks the column '{}' (needs steps, topk, num_draft_tokens, accept_len)",
                          *names.begin()));
    };
    const std::size_t cs = column({"steps"}), ck = column({"topk"}), cn = column({"num_draft_tokens"}),
                      cl = column({"accept_len", "acc_length"});
    for (std::size_t i = first + 1; i < lines.size(); ++i) {
      if (trim(lines[i]).empty()) continue;
      const auto cells = split_csv(lines[i]);
      if (cells.size() != header.size())
        fail_at(file, i + 1, fmt::format("{} cells, the header has {}", cells.size(), header.size()));
      double v[4];
      const std::size_t cols[4] = {cs, ck, cn, cl};
      for (int c = 0; c < 4; ++c)
        if (!ingest::parse_number(cells[cols[c]], v[c]))
          fail_at(file, i + 1, fmt::format("'{}' in column {} is not a number", cells[cols[c]], header[cols[c]]));
      if (v[0] == 0) continue;
      raw.push_back(row_observation(v[0], v[1], v[2], v[3], fmt::format("{}:{}", file, i + 1)));
    }
  }
  if (raw.empty()) throw InputError("no speculative row (steps > 0) in the bench results", file);
  return average(raw);
}

namespace {

// A published-acceptance file (traces/published-acceptance/): one JSON document whose `settings`
// list each setting with its accept_len, or the low and high of a stated range (its midpoint).
std::vector<AcceptObservation> observations_from_settings_doc(const nlohmann::json& doc, const std::string& file) {
  const auto& list = doc.at("settings");
  if (!list.is_array() || list.empty()) throw InputError("settings must be a non-empty list", file + ": settings");
  std::vector<AcceptObservation> raw;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = fmt::format("{}: settings[{}]", file, i);
    const auto& e = list[i];
    if (!e.is_object()) throw InputError("each setting must be an object", where);
    const double len = e.contains("accept_len")
                           ? json_double(e, "accept_len", where)
                           : (json_double(e, "accept_len_low", where) + json_double(e, "accept_len_high", where)) / 2;
    raw.push_back(row_observation(json_double(e, "steps", where), json_double(e, "topk", where),
                                  json_double(e, "draft_tokens", where), len, where));
  }
  // `model` names the target first, then the draft ("DeepSeek-V3 with its NextN (MTP) layer as
  // the draft"): its first word is the model the acceptance was measured on.
  std::string model;
  if (doc.contains("model") && doc["model"].is_string()) {
    const std::string_view m = trim(doc["model"].get_ref<const std::string&>());
    model = std::string(m.substr(0, m.find_first_of(" \t")));
  }
  auto out = average(raw);
  for (auto& o : out) o.model = model;
  return out;
}

}  // namespace

std::vector<AcceptObservation> read_observations(const std::string& path, const std::string& flag,
                                                 const StatedSettings* stated, bool* stated_used) {
  const std::string text = read_bounded(path, flag + " " + path);
  std::string_view head;  // the first non-blank line
  for (const auto l : split_lines(text))
    if (!trim(l).empty()) {
      head = trim(l);
      break;
    }
  if (head == "{") {  // one JSON document over several lines, not JSON lines
    const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_object() && doc.contains("settings")) return observations_from_settings_doc(doc, path);
    if (!doc.is_discarded())
      throw InputError(
          "a JSON document without a settings list: give bench_speculative.py's JSON lines (one object "
          "a line), a CSV, an SGLang log or a published-acceptance file (settings: steps, topk, "
          "draft_tokens, accept_len)",
          path);
  }
  const bool bench = !head.empty() && (head.front() == '{' || head.rfind("steps", 0) == 0 ||
                                       head.rfind("batch_size", 0) == 0 || head.rfind("topk", 0) == 0);
  return bench ? observations_from_bench(text, path) : observations_from_log(text, path, stated, stated_used);
}

}  // namespace specsim::accept
