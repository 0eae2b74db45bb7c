#include "ingest/sglang_server_args.h"

#include <fmt/format.h>

#include <cmath>

#include "ingest/text_lines.h"

namespace specsim::ingest {

namespace {

constexpr std::string_view kMarker = "server_args=ServerArgs(";

// One past the closing quote of the Python string literal opening at s[i]; npos when it is
// not closed on the line. A backslash escapes the next character.
std::size_t end_of_string(std::string_view s, std::size_t i) {
  const char q = s[i];
  for (std::size_t j = i + 1; j < s.size(); ++j) {
    if (s[j] == '\\')
      ++j;
    else if (s[j] == q)
      return j + 1;
  }
  return std::string_view::npos;
}

bool is_open(char c) { return c == '(' || c == '[' || c == '{' || c == '<'; }
bool is_close(char c) { return c == ')' || c == ']' || c == '}' || c == '>'; }
bool is_ident(char c, bool first) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9');
}

// The text of a quoted literal without its quotes, the common escapes undone.
std::string unquote(std::string_view v) {
  std::string out;
  for (std::size_t i = 1; i + 1 < v.size(); ++i) {
    if (v[i] != '\\' || i + 2 >= v.size()) {
      out += v[i];
      continue;
    }
    const char e = v[++i];
    out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
  }
  return out;
}

// Converts the values of the keys that are read; the error names the key and its value.
class Reader {
 public:
  Reader(const std::string& file, std::size_t ln) : file_(file), ln_(ln) {}

  [[noreturn]] void bad(const std::string& key, std::string_view v, const char* expected) const {
    const std::string shown = v.size() > 60 ? std::string(v.substr(0, 60)) + "..." : std::string(v);
    fail_at(file_, ln_, fmt::format("bad server_args {}={}: expected {}", key, shown, expected));
  }

  std::optional<std::string> str_or_none(const std::string& key, std::string_view v) const {
    if (v == "None") return std::nullopt;
    if (v.size() < 2 || (v.front() != '\'' && v.front() != '"') || v.back() != v.front())
      bad(key, v, "a quoted string or None");
    return unquote(v);
  }
  std::string str(const std::string& key, std::string_view v) const {
    auto s = str_or_none(key, v);
    if (!s) bad(key, v, "a quoted string");
    return *s;
  }
  std::optional<int> int_or_none(const std::string& key, std::string_view v, int lo, int hi) const {
    if (v == "None") return std::nullopt;
    double d = 0;
    if (!parse_number(v, d) || d != std::floor(d) || d < lo || d > hi)
      bad(key, v, fmt::format("a whole number from {} to {} or None", lo, hi).c_str());
    return static_cast<int>(d);
  }
  int integer(const std::string& key, std::string_view v, int lo, int hi) const {
    auto n = int_or_none(key, v, lo, hi);
    if (!n) bad(key, v, "a whole number");
    return *n;
  }
  bool boolean(const std::string& key, std::string_view v) const {
    if (v != "True" && v != "False") bad(key, v, "True or False");
    return v == "True";
  }
  std::optional<double> fraction_or_none(const std::string& key, std::string_view v) const {
    if (v == "None") return std::nullopt;
    double d = 0;
    if (!parse_number(v, d) || d <= 0 || d > 1) bad(key, v, "a number in (0, 1] or None");
    return d;
  }

 private:
  const std::string& file_;
  std::size_t ln_;
};

void read_key(ServerArgs& a, const Reader& r, const std::string& k, std::string_view v) {
  constexpr int kMaxGpus = 1 << 16, kMaxDepth = 1024, kMaxBatch = 1 << 24;
  if (k == "model_path")
    a.model_path = r.str(k, v);
  else if (k == "served_model_name")
    a.served_model_name = r.str_or_none(k, v);
  else if (k == "tp_size")
    a.tp_size = r.integer(k, v, 1, kMaxGpus);
  else if (k == "dp_size")
    a.dp_size = r.integer(k, v, 1, kMaxGpus);
  else if (k == "speculative_algorithm")
    a.speculative_algorithm = r.str_or_none(k, v);
  else if (k == "speculative_draft_model_path")
    a.speculative_draft_model_path = r.str_or_none(k, v);
  else if (k == "speculative_num_steps")
    a.speculative_num_steps = r.int_or_none(k, v, 0, kMaxDepth);
  else if (k == "speculative_eagle_topk")
    a.speculative_eagle_topk = r.int_or_none(k, v, 0, kMaxDepth);
  else if (k == "speculative_num_draft_tokens")
    a.speculative_num_draft_tokens = r.int_or_none(k, v, 0, kMaxDepth);
  else if (k == "cuda_graph_max_bs" || k == "cuda_graph_max_bs_decode")  // v0.5.14's name for decode's
    a.cuda_graph_max_bs = r.int_or_none(k, v, 0, kMaxBatch);
  else if (k == "max_running_requests")
    a.max_running_requests = r.int_or_none(k, v, 0, kMaxBatch);
  else if (k == "disable_cuda_graph")
    a.disable_cuda_graph = a.disable_cuda_graph || r.boolean(k, v);
  else if (k == "disable_decode_cuda_graph")  // v0.5.14 and later: decode's graphs alone
    a.disable_cuda_graph = a.disable_cuda_graph || r.boolean(k, v);
  else if (k == "cuda_graph_backend_decode")  // v0.5.14 and later: 'full' is v0.5.2's decode graph
    a.disable_cuda_graph = a.disable_cuda_graph || unquote(v) == "disabled";
  else if (k == "disable_custom_all_reduce")
    a.disable_custom_all_reduce = r.boolean(k, v);
  else if (k == "enable_dp_attention")
    a.enable_dp_attention = r.boolean(k, v);
  else if (k == "disable_overlap_schedule")
    a.disable_overlap_schedule = r.boolean(k, v);
  else if (k == "enable_torch_compile")
    a.enable_torch_compile = r.boolean(k, v);
  else if (k == "attention_backend")
    a.attention_backend = r.str_or_none(k, v);
  else if (k == "dtype")
    a.dtype = r.str(k, v);
  else if (k == "quantization")
    a.quantization = r.str_or_none(k, v);
  else if (k == "kv_cache_dtype")
    a.kv_cache_dtype = r.str(k, v);
  else if (k == "mem_fraction_static")
    a.mem_fraction_static = r.fraction_or_none(k, v);
  // Every other key (host, port, chunked_prefill_size, ...) does not shape the decode cycle.
}

}  // namespace

bool is_server_args_line(std::string_view line) { return line.find(kMarker) != std::string_view::npos; }

ServerArgs parse_server_args(std::string_view l, const std::string& file, std::size_t ln) {
  ServerArgs a;
  a.line = ln;
  const Reader r(file, ln);
  const std::size_t at = l.find(kMarker);
  if (at == std::string_view::npos) fail_at(file, ln, "no server_args=ServerArgs( on the line");
  std::size_t i = at + kMarker.size();
  auto skip_blanks = [&] {
    while (i < l.size() && (l[i] == ' ' || l[i] == '\t')) ++i;
  };
  const auto truncated = [&] { fail_at(file, ln, "server_args line ends before its closing ')' (truncated line?)"); };
  skip_blanks();
  if (i < l.size() && l[i] == ')') return a;
  bool have_model = false;
  while (true) {
    skip_blanks();
    const std::size_t k0 = i;
    while (i < l.size() && is_ident(l[i], i == k0)) ++i;
    if (i == k0 || i >= l.size() || l[i] != '=') {
      if (i >= l.size()) truncated();
      fail_at(file, ln, fmt::format("server_args: expected key=value at column {}", i + 1));
    }
    const std::string key(l.substr(k0, i - k0));
    const std::size_t v0 = ++i;
    int depth = 0;
    // The value runs to the next ',' or the closing ')' outside any quotes and brackets.
    while (i < l.size()) {
      const char c = l[i];
      if (c == '\'' || c == '"') {
        i = end_of_string(l, i);
        if (i == std::string_view::npos) truncated();
        continue;
      }
      if (depth == 0 && (c == ',' || c == ')')) break;
      if (is_open(c)) ++depth;
      if (is_close(c) && depth > 0) --depth;  // a bare `>` (an arrow in a repr) closes nothing
      ++i;
    }
    if (i >= l.size()) truncated();
    const std::string_view value = trim(l.substr(v0, i - v0));
    if (value.empty()) fail_at(file, ln, fmt::format("server_args: {}= has no value", key));
    read_key(a, r, key, value);
    have_model = have_model || key == "model_path";
    a.raw[key] = std::string(value);
    if (l[i] == ')') break;
    ++i;  // past ','
  }
  if (!have_model) fail_at(file, ln, "server_args line without model_path");
  return a;
}

}  // namespace specsim::ingest
