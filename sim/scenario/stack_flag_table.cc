#include "scenario/stack_flag_table.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "scenario/paths.h"
#include "util/error.h"
#include "util/text.h"

namespace specsim {

namespace {

// One CSV line: comma-separated fields, double quotes group (a doubled quote is a quote).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"')
      out.back() += '"', ++i;
    else if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted)
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

std::vector<std::string> split_bar(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < s.size()) {
    const auto bar = s.find('|', start);
    const auto end = bar == std::string::npos ? s.size() : bar;
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

FlagArity parse_arity(const std::string& s, const std::string& where) {
  if (s == "switch") return FlagArity::Switch;
  if (s == "bool") return FlagArity::Bool;
  if (s == "value") return FlagArity::Value;
  if (s == "list") return FlagArity::List;
  if (s == "optional") return FlagArity::Optional;
  throw InputError("arity '" + s + "' is none of switch, bool, value, list, optional", where);
}

FlagClass parse_class(const std::string& s, const std::string& where) {
  if (s == "modelled") return FlagClass::Modelled;
  if (s == "refused") return FlagClass::Refused;
  if (s == "ignored") return FlagClass::Ignored;
  throw InputError("class '" + s + "' is none of modelled, refused, ignored", where);
}

// Each data row of models/stacks/<file> (after its header; blank and # lines skipped), checked to
// have `fields` fields, with "SOURCE line N" for errors. `what`: the file in words.
template <typename Row>
void for_each_row(const std::string& file, const std::string& what, std::size_t fields, const std::string& columns,
                  Row&& row) {
  const std::string source = "models/stacks/" + file;
  const std::string path = (std::filesystem::path(models_dir()) / "stacks" / file).string();
  std::ifstream in(path);
  if (!in) throw InputError("cannot read the " + what + " " + path, source);
  std::string line;
  int n = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    const std::string where = source + " line " + std::to_string(n);
    const auto f = csv_fields(line);
    if (f.size() != fields) throw InputError("expected " + std::to_string(fields) + " fields (" + columns + ")", where);
    if (!header) {
      header = true;
      continue;
    }
    row(f, where);
  }
}

StackFlagTable load_table(const std::string& stack, const std::string& file) {
  StackFlagTable t;
  t.stack = stack;
  t.source = "models/stacks/" + file;
  t.underscores = stack == "vllm";
  for_each_row(
      file, "flag table", 5, "flag,aliases,arity,class,what",
      [&](const std::vector<std::string>& f, const std::string& where) {
        if (f[0].rfind("--", 0) != 0) throw InputError("'" + f[0] + "' is not a --flag", where);
        t.rows.push_back({f[0], split_bar(f[1]), parse_arity(f[2], where), parse_class(f[3], where), f[4], {}});
      });
  if (t.rows.empty()) throw InputError("no flags in the table", t.source);
  return t;
}

// models/stacks/<file>: flag,value,class,what; each flag a row of `t` that takes a value.
void load_value_classes(StackFlagTable& t, const std::string& file) {
  for_each_row(file, "per-value flag classes", 4, "flag,value,class,what",
               [&](const std::vector<std::string>& f, const std::string& where) {
                 StackFlag* row = nullptr;
                 for (auto& r : t.rows)
                   if (r.flag == f[0]) row = &r;
                 for (auto& n : t.newer)  // a later release's flag (its file is loaded first)
                   if (n.row.flag == f[0]) row = &n.row;
                 if (!row) throw InputError("'" + f[0] + "' is not a flag of " + t.source, where);
                 if (row->arity == FlagArity::Switch)
                   throw InputError(f[0] + " takes no value: its class is its row's", where);
                 // a bool flag's two forms: --X is "on", --no-X "off"
                 if (row->arity == FlagArity::Bool && f[1] != "on" && f[1] != "off")
                   throw InputError(
                       f[0] + " is a bool flag: its values are on (" + f[0] + ") and off (--no-" + f[0].substr(2) + ")",
                       where);
                 if (f[1].empty() || f[3].empty()) throw InputError("expected a value and what it changes", where);
                 if (row->for_value(f[1])) throw InputError(f[0] + " " + f[1] + " is classed twice", where);
                 row->by_value.push_back({f[1], parse_class(f[2], where), f[3]});
               });
}

// models/stacks/<file>: spelling,flag,why; each flag a row of `t`, each spelling none of its own.
void load_older_spellings(StackFlagTable& t, const std::string& file) {
  for_each_row(file, "older spellings", 3, "spelling,flag,why",
               [&](const std::vector<std::string>& f, const std::string& where) {
                 // vLLM's --speculative-config.KEY: the flag before the dot
                 const std::string flag = t.stack == "vllm" ? f[1].substr(0, f[1].find('.')) : f[1];
                 if (!flag.empty() &&
                     std::none_of(t.rows.begin(), t.rows.end(), [&](const StackFlag& r) { return r.flag == flag; }))
                   throw InputError("'" + f[1] + "' is not a flag of " + t.source, where);
                 for (const auto& r : t.rows)
                   if (r.flag == f[0] || std::find(r.aliases.begin(), r.aliases.end(), f[0]) != r.aliases.end())
                     throw InputError("'" + f[0] + "' is a spelling of " + t.source + " itself", where);
                 if (f[2].empty()) throw InputError("expected why", where);
                 t.older.push_back({f[0], f[1], f[2], ""});
               });
}

// models/stacks/<file>: flag,aliases,arity,class,what,default,since,spelling_of; the flags later
// releases than t's (`pinned`) added, classed as t's (a modelled one must have its applier, as
// t's), or, with `spelling_of`, a later release's name of one of t's flags (read as it).
// `release`: the newest release the file covers.
void load_newer_flags(StackFlagTable& t, const std::string& file, const std::string& pinned,
                      const std::string& release) {
  t.newer_source = "models/stacks/" + file;
  t.newer_release = release;
  // a release tag after the pinned one (v0.5.14), or a main commit's date (main 2026-08-17), as the
  // table's newest release is written
  static const std::regex kRelease(R"(v[0-9]+(\.[0-9]+)*|main [0-9]{4}-[0-9]{2}-[0-9]{2})");
  for_each_row(file, "newer flag table", 8, "flag,aliases,arity,class,what,default,since,spelling_of",
               [&](const std::vector<std::string>& f, const std::string& where) {
                 if (f[0].rfind("--", 0) != 0) throw InputError("'" + f[0] + "' is not a --flag", where);
                 if (!std::regex_match(f[6], kRelease) || f[6][0] != release[0] || !release_at_least(release, f[6]) ||
                     (f[6][0] == 'v' && release_at_least(pinned, f[6])))
                   throw InputError("since '" + f[6] + "' is not a release after " + pinned + " and up to " + release +
                                        " (vX.Y.Z, or main YYYY-MM-DD)",
                                    where);
                 if (f[4].empty()) throw InputError("expected what it changes or is about", where);
                 StackFlag row{f[0], split_bar(f[1]), parse_arity(f[2], where), parse_class(f[3], where), f[4], {}};
                 std::vector<std::string> spellings = row.aliases;
                 spellings.insert(spellings.begin(), row.flag);
                 for (const auto& sp : spellings)
                   for (const auto& r : t.rows)
                     if (r.flag == sp || std::find(r.aliases.begin(), r.aliases.end(), sp) != r.aliases.end())
                       throw InputError("'" + sp + "' is a spelling of " + t.source + " itself", where);
                 if (!f[7].empty()) {
                   // vLLM's --speculative-config.KEY: the flag before the dot
                   const std::string target = t.stack == "vllm" ? f[7].substr(0, f[7].find('.')) : f[7];
                   const auto old =
                       std::find_if(t.rows.begin(), t.rows.end(), [&](const StackFlag& r) { return r.flag == target; });
                   if (old == t.rows.end())
                     throw InputError("spelling_of '" + f[7] + "' is not a flag of " + t.source, where);
                   if (old->arity != row.arity)
                     throw InputError("its arity differs from " + f[7] + "'s: it cannot be read as that flag", where);
                   for (const auto& sp : spellings) t.older.push_back({sp, f[7], f[4], f[6]});
                   return;
                 }
                 t.newer.push_back({std::move(row), f[6], f[5]});
               });
}

}  // namespace

bool release_at_least(const std::string& a, const std::string& b) {
  // "v0.5.14" -> {0, 5, 14}, "main 2026-08-17" -> {2026, 8, 17}: the numbers after any leading
  // word, split at '.' or '-'; a part that is not a number ends the comparison
  const auto parts = [](const std::string& v) {
    std::vector<long> out;
    std::size_t i = 0;
    while (i < v.size() && !std::isdigit(static_cast<unsigned char>(v[i]))) ++i;
    while (i < v.size()) {
      std::size_t j = i;
      while (j < v.size() && std::isdigit(static_cast<unsigned char>(v[j]))) ++j;
      if (j == i) break;
      out.push_back(std::stol(v.substr(i, std::min<std::size_t>(j - i, 9))));
      if (j >= v.size() || (v[j] != '.' && v[j] != '-')) break;
      i = j + 1;
    }
    return out;
  };
  const auto x = parts(a), y = parts(b);
  for (std::size_t k = 0; k < std::max(x.size(), y.size()); ++k) {
    const long xa = k < x.size() ? x[k] : 0, yb = k < y.size() ? y[k] : 0;
    if (xa != yb) return xa > yb;
  }
  return true;
}

const StackFlagTable::NewerFlag* StackFlagTable::newer_flag(const std::string& spelling, bool* negated) const {
  std::string s = spelling;
  if (underscores && s.rfind("--", 0) == 0) std::replace(s.begin() + 2, s.end(), '_', '-');
  if (negated) *negated = false;
  for (const auto& n : newer) {
    const StackFlag& r = n.row;
    if (r.flag == s || std::find(r.aliases.begin(), r.aliases.end(), s) != r.aliases.end()) return &n;
    if (r.arity == FlagArity::Bool && s == "--no-" + r.flag.substr(2)) {
      if (negated) *negated = true;
      return &n;
    }
  }
  return nullptr;
}

std::string_view flag_class_name(FlagClass c) {
  switch (c) {
    case FlagClass::Modelled: return "modelled";
    case FlagClass::Refused: return "refused";
    case FlagClass::Ignored: return "ignored";
  }
  return "?";
}

const FlagValueClass* StackFlag::for_value(const std::string& value) const {
  for (const auto& v : by_value)
    if (v.value == value) return &v;
  return nullptr;
}

bool StackFlag::modelled_for_some() const {
  return cls == FlagClass::Modelled || std::any_of(by_value.begin(), by_value.end(), [](const FlagValueClass& v) {
           return v.cls == FlagClass::Modelled;
         });
}

const StackFlag* StackFlagTable::find(const std::string& spelling, const std::string& where, bool* negated) const {
  std::string s = spelling;
  if (underscores && s.rfind("--", 0) == 0) std::replace(s.begin() + 2, s.end(), '_', '-');
  if (negated) *negated = false;
  for (const auto& r : rows) {
    if (r.flag == s || std::find(r.aliases.begin(), r.aliases.end(), s) != r.aliases.end()) return &r;
    if (r.arity == FlagArity::Bool && s == "--no-" + r.flag.substr(2)) {
      if (negated) *negated = true;
      return &r;
    }
  }
  if (s.rfind("--", 0) != 0 || s.size() < 3) return nullptr;
  // argparse's abbreviations: a unique prefix of one flag's long spellings.
  std::vector<const StackFlag*> hits;
  std::vector<std::string> names;
  for (const auto& r : rows) {
    std::vector<std::string> all = r.aliases;
    all.insert(all.begin(), r.flag);
    for (const auto& a : all)
      if (a.rfind("--", 0) == 0 && a.rfind(s, 0) == 0) {
        if (std::find(hits.begin(), hits.end(), &r) == hits.end()) hits.push_back(&r);
        names.push_back(a);
      }
  }
  if (hits.size() == 1) return hits.front();
  if (hits.size() > 1) {
    std::string l;
    for (const auto& a : names) l += (l.empty() ? "" : ", ") + a;
    throw InputError("'" + spelling + "' is ambiguous in " + stack + " (" + l + "): write the flag out", where);
  }
  return nullptr;
}

const StackFlagTable::OlderSpelling* StackFlagTable::older_spelling(const std::string& spelling) const {
  std::string s = spelling;
  if (underscores && s.rfind("--", 0) == 0) std::replace(s.begin() + 2, s.end(), '_', '-');
  for (const auto& o : older)
    if (o.spelling == s) return &o;
  return nullptr;
}

FlagValueClass environment_class(const std::string& name, const std::string& value) {
  struct EnvRow {
    std::string name, value;
    FlagValueClass cls;
  };
  static const std::vector<EnvRow> rows = [] {
    std::vector<EnvRow> r;
    for_each_row("environment.csv", "environment table", 4, "name,value,class,what",
                 [&](const std::vector<std::string>& f, const std::string& where) {
                   if (f[0].empty() || f[3].empty()) throw InputError("expected a name and what it changes", where);
                   const FlagClass c = parse_class(f[2], where);
                   // the code applies these by name (pasted_command.cc, sglang_spec_worker.cc); any other
                   // would be silently unapplied
                   if (c == FlagClass::Modelled && f[0] != "NCCL_P2P_LEVEL" && f[0] != "NCCL_ALGO" &&
                       f[0] != "NCCL_PROTO" && f[0] != "SGLANG_ENABLE_SPEC_V2")
                     throw InputError(f[0] + " is marked modelled but nothing applies it", where);
                   r.push_back({f[0], f[1], {f[0], c, f[3]}});
                 });
    return r;
  }();
  const EnvRow* any = nullptr;
  for (const auto& r : rows)
    if (r.name == name) {
      if (ascii_lower(r.value) == ascii_lower(value) && !r.value.empty()) return r.cls;
      if (r.value.empty()) any = &r;
    }
  if (any) return any->cls;
  return {name, FlagClass::Refused, "the stack's or NCCL's behaviour through the environment"};
}

const StackFlagTable& stack_flag_table(std::string_view stack) {
  static std::map<std::string, std::unique_ptr<StackFlagTable>> cache;
  auto& slot = cache[std::string(stack)];
  if (!slot) {
    if (stack == "sglang") {
      slot = std::make_unique<StackFlagTable>(load_table("sglang", "sglang-v0.5.2-server-args.csv"));
      load_value_classes(*slot, "sglang-v0.5.2-flag-values.csv");
      load_older_spellings(*slot, "sglang-older-spellings.csv");
      load_newer_flags(*slot, "sglang-v0.5.18-newer-flags.csv", "v0.5.2", "v0.5.18");
      load_value_classes(*slot, "sglang-v0.5.18-flag-values.csv");
    } else if (stack == "vllm") {
      slot = std::make_unique<StackFlagTable>(load_table("vllm", "vllm-v0.11.0-serve-args.csv"));
      load_value_classes(*slot, "vllm-v0.11.0-flag-values.csv");
      load_older_spellings(*slot, "vllm-older-spellings.csv");
      load_newer_flags(*slot, "vllm-main-2026-08-17-newer-flags.csv", "v0.11.0", "main 2026-08-17");
    } else
      throw InputError("no flag table for '" + std::string(stack) + "' (sglang, vllm)", "stack");
  }
  return *slot;
}

}  // namespace specsim
