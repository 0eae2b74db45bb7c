#include "ingest/python_literal.h"

#include <cctype>
#include <string>

#include "ingest/text_lines.h"

namespace specsim::ingest {

namespace {

using nlohmann::json;

// Nesting deeper than this is no server's argument list: read as text, never recursed into.
constexpr int kMaxLiteralNesting = 32;

class LiteralReader {
 public:
  explicit LiteralReader(std::string_view s) : s_(s) {}

  std::optional<json> value(int depth) {
    blanks();
    if (i_ >= s_.size()) return std::nullopt;
    const char c = s_[i_];
    if (c == '\'' || c == '"') return string();
    if (depth < kMaxLiteralNesting && (c == '[' || c == '(')) return sequence(c == '[' ? ']' : ')', depth);
    if (depth < kMaxLiteralNesting && c == '{') return dict(depth);
    return bare();
  }
  std::size_t at() const { return i_; }

 private:
  void blanks() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }

  std::optional<json> string() {
    const char q = s_[i_++];
    std::string out;
    for (; i_ < s_.size(); ++i_) {
      const char c = s_[i_];
      if (c == q) {
        ++i_;
        return json(out);
      }
      if (c == '\\' && i_ + 1 < s_.size()) {
        const char e = s_[++i_];
        out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
      } else {
        out += c;
      }
    }
    return std::nullopt;
  }

  // After an element: a ',' (taken) or the closing bracket (left for the caller); anything else is
  // no literal (and reading on would not advance).
  bool separator(char close) {
    blanks();
    if (i_ < s_.size() && s_[i_] == ',') return ++i_, true;
    return i_ < s_.size() && s_[i_] == close;
  }

  // [a, b] and (a, b): a JSON array (a one-element tuple's trailing comma allowed).
  std::optional<json> sequence(char close, int depth) {
    ++i_;
    json out = json::array();
    while (true) {
      blanks();
      if (i_ >= s_.size()) return std::nullopt;
      if (s_[i_] == close) return ++i_, out;
      auto v = value(depth + 1);
      if (!v) return std::nullopt;
      out.push_back(std::move(*v));
      if (!separator(close)) return std::nullopt;
    }
  }

  // {'k': v, ...}: keys are read as literals and used as their text.
  std::optional<json> dict(int depth) {
    ++i_;
    json out = json::object();
    while (true) {
      blanks();
      if (i_ >= s_.size()) return std::nullopt;
      if (s_[i_] == '}') return ++i_, out;
      auto k = value(depth + 1);
      if (!k) return std::nullopt;
      blanks();
      if (i_ >= s_.size() || s_[i_] != ':') return std::nullopt;
      ++i_;
      auto v = value(depth + 1);
      if (!v) return std::nullopt;
      out[k->is_string() ? k->get<std::string>() : k->dump(-1, ' ', false, json::error_handler_t::replace)] =
          std::move(*v);
      if (!separator('}')) return std::nullopt;
    }
  }

  // A number, True/False/None, or any other text up to the next ',', ':' or closing bracket at
  // this depth (an object's repr with its own brackets and quotes inside).
  std::optional<json> bare() {
    const std::size_t start = i_;
    int depth = 0;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\'' || c == '"') {
        if (!string()) return std::nullopt;
        continue;
      }
      if (depth == 0 && (c == ',' || c == ':' || c == ']' || c == ')' || c == '}')) break;
      if (c == '(' || c == '[' || c == '{') ++depth;
      if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
      ++i_;
    }
    const std::string_view text = trim(s_.substr(start, i_ - start));
    if (depth > 0 || text.empty()) return std::nullopt;
    if (text == "True") return json(true);
    if (text == "False") return json(false);
    if (text == "None") return json(nullptr);
    double d = 0;
    if (parse_number(text, d)) {
      const bool whole = text.find_first_of(".eE") == std::string_view::npos && d >= -9e15 && d <= 9e15;
      return whole ? json(static_cast<long long>(d)) : json(d);
    }
    return json(std::string(text));
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

}  // namespace

std::optional<PythonLiteral> read_python_literal(std::string_view text) {
  LiteralReader r(text);
  auto v = r.value(0);
  if (!v) return std::nullopt;
  return PythonLiteral{std::move(*v), r.at()};
}

}  // namespace specsim::ingest
