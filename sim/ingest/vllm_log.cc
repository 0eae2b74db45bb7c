#include "ingest/vllm_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "ingest/python_literal.h"
#include "ingest/text_lines.h"
#include "util/error.h"
#include "util/text.h"

namespace specsim::ingest {

namespace {

using nlohmann::json;

constexpr std::string_view kStatsMark = "Avg prompt throughput:";
constexpr std::string_view kSpecMark = "SpecDecoding metrics:";
constexpr std::string_view kArgsMark = "non-default args:";
constexpr std::string_view kKvSizeMark = "GPU KV cache size: ";
constexpr double kMaxVllmAcceptLen = 64;  // num_speculative_tokens + 1 stays far below this

// The fields after `mark`, split at ", ": "Key: value[ unit]" -> (Key, value); a trailing '.' (the
// V0 engine's line) is dropped.
std::vector<std::pair<std::string_view, std::string_view>> vllm_fields(std::string_view rest) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(", ");
    std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 2);
    if (!item.empty() && item.back() == '.') item.remove_suffix(1);
    const std::size_t colon = item.find(": ");
    if (colon == std::string_view::npos) continue;  // a per-position list's later values
    std::string_view value = trim(item.substr(colon + 2));
    value = value.substr(0, value.find_first_of(" %"));
    out.emplace_back(trim(item.substr(0, colon)), value);
  }
  return out;
}

double vllm_number(std::string_view v, const char* what, double max, const std::string& file, std::size_t ln) {
  double d = 0;
  if (!parse_number(v, d) || d < 0 || d > max)
    fail_at(file, ln,
            fmt::format("bad {} '{}' in the vLLM stats line (expected a number from 0 to {:g})", what, v, max));
  return d;
}

// `Engine 000: ` before the stats: the engine's index; -1 when the line names none (vLLM <= 0.8).
int engine_index(std::string_view before) {
  const std::size_t at = before.rfind("Engine ");
  if (at == std::string_view::npos) return -1;
  std::size_t i = at + 7;
  int n = 0;
  bool any = false;
  while (i < before.size() && std::isdigit(static_cast<unsigned char>(before[i])) && n < 1000000)
    n = n * 10 + (before[i++] - '0'), any = true;
  return any ? n : -1;
}

// The process a line came from (`(APIServer pid=95669)`: "95669"), "" when the line names none:
// a data-parallel server's engines may log from processes of their own, interleaved.
std::string process_of(std::string_view before) {
  const std::size_t at = before.find("pid=");
  if (at == std::string_view::npos) return "";
  std::size_t end = at + 4;
  while (end < before.size() && std::isdigit(static_cast<unsigned char>(before[end]))) ++end;
  return std::string(before.substr(at + 4, end - at - 4));
}

// The engine whose lines are read in lines [from, the next launch line): the first one they show
// decoding (a stats line at a running request), else the first one they show.
int engine_to_read(const std::vector<std::string_view>& lines, std::size_t from) {
  std::optional<int> first;
  for (std::size_t i = from; i < lines.size(); ++i) {
    const std::string_view l = lines[i];
    if (l.find(kArgsMark) != std::string_view::npos) break;
    const std::size_t at = l.find(kStatsMark);
    if (at == std::string_view::npos) continue;
    const int e = engine_index(l.substr(0, at));
    if (!first) first = e;
    for (const auto& [k, v] : vllm_fields(l.substr(at))) {
      double r = 0;
      if (k == "Running" && parse_number(v, r) && r > 0) return e;
    }
  }
  return first.value_or(-1);
}

// The release a line names: `vLLM API server version 0.11.0`, `Initializing a V1 LLM engine
// (v0.11.0) with config`, or the start-up banner's `version 0.17.1`; "" when it names none.
std::string version_named(std::string_view l) {
  for (std::string_view mark : {std::string_view("API server version "), std::string_view("LLM engine (v"),
                                std::string_view("\u2588  version ")}) {
    const std::size_t at = l.find(mark);
    if (at == std::string_view::npos) continue;
    std::string_view v = l.substr(at + mark.size());
    v = v.substr(0, v.find_first_of(" )"));
    if (!v.empty() && std::isdigit(static_cast<unsigned char>(v.front()))) return std::string(v);
  }
  return "";
}

std::string dashed(std::string k) {
  std::replace(k.begin(), k.end(), '_', '-');
  return k;
}

std::string token_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump(-1, ' ', false, json::error_handler_t::replace);  // a log's bytes need not be UTF-8
}

// SGLang's name of a vLLM speculative method (what the rest of specsim reads off a launch).
std::optional<std::string> algorithm_of(const std::string& method) {
  const std::string m = ascii_lower(method);
  if (m == "eagle3") return "EAGLE3";
  if (m == "eagle") return "EAGLE";
  if (m.find("mtp") != std::string::npos) return "NEXTN";
  return ascii_upper(m);
}

// The launch the `non-default args` dict describes: the fields other commands read, and the
// `vllm serve` command it came from (booleans as --X / --no-X, lists as several values, dicts as
// JSON, None left out: vLLM's default).
ServerArgs launch_of(const json& args, std::size_t ln, const std::string& version) {
  ServerArgs a;
  a.stack = "vllm", a.line = ln, a.vllm_version = version;
  for (const auto& [k, v] : args.items()) {
    a.raw[k] = token_of(v);
    if (k == "model_tag" && args.contains("model")) continue;  // the positional MODEL, given again as 'model'
    const std::string flag = "--" + dashed(k == "model_tag" ? "model" : k);
    if (v.is_null() || (v.is_array() && v.empty())) continue;
    std::vector<std::string> group;
    if (v.is_boolean()) {
      group.push_back(v.get<bool>() ? flag : "--no-" + flag.substr(2));
    } else {
      group.push_back(flag);
      if (v.is_array())
        for (const auto& e : v) group.push_back(token_of(e));
      else
        group.push_back(token_of(v));
    }
    a.vllm_flags.push_back(std::move(group));
  }
  auto text = [&](const char* k) -> std::optional<std::string> {
    if (!args.contains(k)) return std::nullopt;
    const json& v = args[k];
    if (v.is_string()) return v.get<std::string>();
    if (v.is_array() && !v.empty() && v.front().is_string()) return v.front().get<std::string>();
    return std::nullopt;
  };
  auto whole = [&](const json& o, const char* k) -> std::optional<int> {
    if (!o.is_object() || !o.contains(k) || !o[k].is_number_integer()) return std::nullopt;
    const long long n = o[k].get<long long>();
    return n >= 1 && n <= (1 << 20) ? std::optional<int>(static_cast<int>(n)) : std::nullopt;
  };
  a.model_path = text("model").value_or(text("model_tag").value_or(""));
  a.served_model_name = text("served_model_name");
  a.tp_size = whole(args, "tensor_parallel_size").value_or(1);
  a.dp_size = whole(args, "data_parallel_size").value_or(1);
  a.max_running_requests = whole(args, "max_num_seqs");
  auto on = [&](const char* k) { return args.contains(k) && args[k].is_boolean() && args[k].get<bool>(); };
  a.disable_cuda_graph = on("enforce_eager");
  a.disable_custom_all_reduce = on("disable_custom_all_reduce");
  a.quantization = text("quantization");
  if (auto d = text("dtype")) a.dtype = *d;
  if (auto d = text("kv_cache_dtype")) a.kv_cache_dtype = *d;
  json spec = args.contains("speculative_config") ? args["speculative_config"] : json();
  if (spec.is_string()) spec = json::parse(spec.get<std::string>(), nullptr, false);
  if (spec.is_object()) {
    const std::optional<int> k = whole(spec, "num_speculative_tokens");
    if (spec.contains("method") && spec["method"].is_string())
      a.speculative_algorithm = algorithm_of(spec["method"].get<std::string>());
    if (spec.contains("model") && spec["model"].is_string())
      a.speculative_draft_model_path = spec["model"].get<std::string>();
    if (!a.speculative_algorithm && k) a.speculative_algorithm = "NEXTN";  // no draft named: the target's MTP
    if (k) a.speculative_num_steps = *k, a.speculative_eagle_topk = 1, a.speculative_num_draft_tokens = *k + 1;
  }
  return a;
}

}  // namespace

bool is_vllm_log(std::string_view text) {
  return text.find("Decode batch") == std::string_view::npos &&
         text.find("Avg generation throughput:") != std::string_view::npos;
}

namespace {

// What reading a vLLM log carries from line to line.
struct VllmReader {
  const std::string& file;
  SglangLog log{};
  int engine = -1;                    // the engine whose lines are read (engine_to_read)
  std::string process{};              // the process its last stats line came from
  std::set<int> engines{};            // the engines the stats lines of this launch name
  bool spec_follows = false;          // its last stats line was read: a SpecDecoding line after it is its interval's
  std::optional<int> prev_running{};  // its previous stats line's Running, of this launch
  std::optional<LogTimestamp> prev_time{};
  bool stats_in_launch = false;       // a stats line of this launch came before
  std::optional<double> kv_tokens{};  // the engine's KV cache in tokens (`GPU KV cache size: 1,234 tokens`)
  std::optional<int> engine_k{};      // num_spec_tokens of the engine's config line (`Initializing a V1 LLM engine`)

  void launch(std::string_view l, std::size_t ln) {
    const std::size_t brace = l.find('{', l.find(kArgsMark));
    const auto lit = brace == std::string_view::npos ? std::nullopt : read_python_literal(l.substr(brace));
    if (!lit || !lit->value.is_object())
      fail_at(file, ln, "the non-default args line does not hold a whole {...} dict (truncated line?)");
    log.server_args.push_back(launch_of(lit->value, ln, log.vllm_version));
    // a server starts idle, and vLLM logs no idle interval before the first request: its first
    // stats line follows Running 0. Nothing of the launch before carries over.
    prev_running = 0, prev_time.reset(), kv_tokens.reset(), stats_in_launch = false;
    spec_follows = false, process.clear(), engine_k.reset(), engines.clear();
  }

  void kv_cache_size(std::string_view l) {
    std::string digits;
    for (char c : l.substr(l.find(kKvSizeMark) + kKvSizeMark.size())) {
      if (c == ',') continue;
      if (!std::isdigit(static_cast<unsigned char>(c))) break;
      digits += c;
    }
    double n = 0;
    if (!digits.empty() && parse_number(digits, n) && n > 0 && n < 1e15) kv_tokens = n;
  }

  // A SpecDecoding line: its mean acceptance length is the interval's of the stats line before it.
  void spec(std::string_view l, std::size_t ln) {
    ++log.spec_lines;
    const std::size_t at = l.find(kSpecMark);
    const bool follows = spec_follows && process_of(l.substr(0, at)) == process;
    if (follows) spec_follows = false;
    std::optional<double> mean, accepted, drafted;
    for (const auto& [k, v] : vllm_fields(l.substr(at + kSpecMark.size()))) {
      double d = 0;
      const bool number = parse_number(v, d) && d >= 0;
      if (k == "Mean acceptance length") {
        if (!number || d < 1 || d > kMaxVllmAcceptLen)
          fail_at(file, ln, fmt::format("bad Mean acceptance length '{}' (expected 1 to {:g})", v, kMaxVllmAcceptLen));
        mean = d;
      }
      if (k == "Accepted" && number) accepted = d;
      if (k == "Drafted" && number) drafted = d;
    }
    // The first V1 form logs only the token counts (vllm-project/vllm#15902): with the launch's
    // speculative tokens K, drafts = drafted / K and the mean is 1 + accepted / drafts.
    std::optional<int> k_tokens = engine_k;
    if (!log.server_args.empty() && log.server_args.back().speculative_num_steps)
      k_tokens = log.server_args.back().speculative_num_steps;
    if (!mean && accepted && drafted) {
      if (!k_tokens)
        fail_at(file, ln,
                "a SpecDecoding line with only Accepted and Drafted token counts, and no line above says how many "
                "tokens a draft proposes (num_speculative_tokens): keep the server's start-up lines in the log");
      if (*drafted > 0 && *accepted <= *drafted) mean = 1 + *accepted * *k_tokens / *drafted;
    }
    if (follows && mean) log.decode.back().accept_len = mean;
  }

  // A stats line: a decode line when it is the read engine's and something was running.
  void stats(std::string_view l, std::size_t ln) {
    const std::size_t at = l.find(kStatsMark);
    DecodeLine d;
    d.line = ln;
    bool have_gen = false, have_running = false;
    for (const auto& [k, v] : vllm_fields(l.substr(at))) {
      d.keys.emplace_back(k);
      if (k == "Swapped" || k == "Pending")
        fail_at(file, ln,
                "a V0-engine stats line (it counts Swapped and Pending requests): specsim's vLLM profiles describe "
                "the V1 engine (vLLM 0.8 and later); log a run with VLLM_USE_V1=1");
      if (k == "Avg prompt throughput") d.prompt_tok_s = vllm_number(v, "Avg prompt throughput", 1e9, file, ln);
      if (k == "Avg generation throughput")
        d.gen_tok_s = vllm_number(v, "Avg generation throughput", 1e9, file, ln), have_gen = true;
      if (k == "GPU KV cache usage" && kv_tokens) {
        // the share of the engine's KV cache the running requests hold, printed to 0.1%
        const double share = vllm_number(v, "GPU KV cache usage", 100, file, ln) / 100;
        d.tokens = std::llround(share * *kv_tokens), d.tokens_key = std::string(k);
      }
      if (k == "Running") {
        const double r = vllm_number(v, "Running", 1e9, file, ln);
        if (r != std::floor(r)) fail_at(file, ln, fmt::format("bad Running '{}': expected a whole count", v));
        d.running_req = static_cast<int>(r), have_running = true;
      }
    }
    if (!have_gen || !have_running)
      fail_at(file, ln, "stats line without Avg generation throughput and Running (truncated line?)");
    const int e = engine_index(l.substr(0, at));
    engines.insert(e);
    log.engines = std::max<int>(log.engines, static_cast<int>(engines.size()));
    const std::string proc = process_of(l.substr(0, at));
    if (e != engine) {                            // another data-parallel rank's engine, decoding its own batch
      if (proc == process) spec_follows = false;  // this process's next SpecDecoding line is that engine's
      return;
    }
    spec_follows = false;  // until this line is a decode line
    process = proc;
    d.time = find_log_timestamp(l.substr(0, at));
    const std::optional<int> before = prev_running;
    const std::optional<LogTimestamp> before_time = prev_time;
    d.first_of_launch = !stats_in_launch;
    prev_running = d.running_req, prev_time = d.time, stats_in_launch = true;
    if (d.running_req == 0) {  // nothing decoding at the interval's end: the tail of a run, or idle
      ++log.idle_lines;
      return;
    }
    if (!log.server_args.empty()) d.server_args_index = log.server_args.size() - 1;
    if (before_time && d.time) d.since_previous_s = seconds_between(*before_time, *d.time);
    if (before && *before != d.running_req)
      d.unsteady =
          fmt::format("Running went from {} to {} reqs: the batch changed inside the interval", *before, d.running_req);
    log.decode.push_back(std::move(d));
    spec_follows = true;
  }
};

}  // namespace

SglangLog parse_vllm_log(const std::string& text, const std::string& file) {
  VllmReader r{file};
  r.log.stack = "vllm";
  const auto lines = split_lines(text);
  r.log.lines = lines.size();
  r.engine = engine_to_read(lines, 0);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view l = lines[i];
    const std::size_t ln = i + 1;
    if (const std::size_t k = l.find("num_spec_tokens=");
        k != std::string_view::npos && l.find("LLM engine") != l.npos) {
      int n = 0;  // the engine's config line: its speculative tokens (vLLM 0.8 logs no non-default args)
      for (std::size_t j = k + 16; j < l.size() && std::isdigit(static_cast<unsigned char>(l[j])) && n < 100000; ++j)
        n = n * 10 + (l[j] - '0');
      if (n > 0) r.engine_k = n;
    }
    if (std::string v = version_named(l); !v.empty()) {
      r.log.vllm_version = v;
      if (!r.log.server_args.empty() && r.log.server_args.back().vllm_version.empty())
        r.log.server_args.back().vllm_version = v;  // the engine's line comes after its launch's
    }
    const bool args = l.find(kArgsMark) != std::string_view::npos, spec = l.find(kSpecMark) != std::string_view::npos,
               stats = l.find(kStatsMark) != std::string_view::npos;
    // The file's last line without its newline may be cut off mid-field (a copied excerpt, a log
    // still being written): a launch line there, or a stats or SpecDecoding line that does not end
    // in a field's unit (vLLM's forms end in `%`, ` tokens` or `GB/s/GPU`), is left out, said; a
    // SpecDecoding line still says speculation was on.
    if (i + 1 == lines.size() && !text.empty() && text.back() != '\n' && (args || spec || stats)) {
      const std::string_view end = trim(l);
      const auto ends_with = [&](std::string_view x) {
        return end.size() >= x.size() && end.substr(end.size() - x.size()) == x;
      };
      if (args || !(ends_with("%") || ends_with(" tokens") || ends_with("GB/s/GPU"))) {
        r.log.cut_last_line = ln;
        r.log.spec_lines += spec;
        break;
      }
    }
    if (l.find("Speculative metrics:") != std::string_view::npos)
      fail_at(file, ln,
              "a V0-engine `Speculative metrics` line: specsim's vLLM profiles describe the V1 engine (vLLM 0.8 and "
              "later); log a run with VLLM_USE_V1=1");
    if (args) {
      r.launch(l, ln);
      r.engine = engine_to_read(lines, i + 1);
    } else if (l.find(kKvSizeMark) != std::string_view::npos)
      r.kv_cache_size(l);
    else if (spec)
      r.spec(l, ln);
    else if (stats)
      r.stats(l, ln);
    else if (!trim(l).empty())
      ++r.log.unknown_lines;
  }
  if (r.log.decode.empty())
    fail_at(file, lines.size(),
            fmt::format("no vLLM stats line with a running request in {} lines (`Avg generation throughput: ..., "
                        "Running: N reqs`): the server logged no decoding (was --disable-log-stats given?)",
                        lines.size()));
  return std::move(r.log);
}

}  // namespace specsim::ingest
