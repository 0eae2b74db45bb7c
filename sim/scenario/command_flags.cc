#include "scenario/command_flags.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <regex>

#include "scenario/command_program.h"
#include "scenario/resolve.h"
#include "util/error.h"

namespace specsim {

namespace {

bool is_number(const std::string& s) {
  static const std::regex kNum(R"(-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?)");
  return std::regex_match(s, kNum);
}

// A token that starts a flag (argparse: a dash, unless it reads as a negative number).
bool is_flag(const std::string& s) { return s.size() > 1 && s[0] == '-' && !is_number(s); }

// An environment assignment the command makes, classed by models/stacks/environment.csv.
PastedFlag env_flag(const std::string& tok) {
  PastedFlag f;
  f.given = tok.substr(0, tok.find('='));
  f.values = {tok.substr(tok.find('=') + 1)};
  const FlagValueClass c = environment_class(f.given, f.values.front());
  f.cls = c.cls, f.what = c.what;
  return f;
}

}  // namespace

std::vector<std::string> split_command(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  char quote = 0;
  bool any = false;
  for (char c : text) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        cur += c;
    } else if (c == '"' || c == '\'') {
      quote = c, any = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (any || !cur.empty()) out.push_back(cur), cur.clear(), any = false;
    } else {
      cur += c;
    }
  }
  if (any || !cur.empty()) out.push_back(cur);
  return out;
}

namespace {

// Whether a later release's flag as pasted sets what its default (as the source writes it:
// False, None, 1, 'ag_rs') already is: a switch or bool flag's on/off against True/False, a
// value against the default's text without quotes (numbers compared as numbers).
bool at_default(const PastedFlag& f, const std::string& dflt) {
  if (f.row->arity == FlagArity::Switch) return dflt == "True";
  if (f.row->arity == FlagArity::Bool) return dflt == (f.negated ? "False" : "True");
  // None: unset in the source; a value given is a value (SGLang reads the text 'None' as a string)
  if (f.values.size() != 1 || dflt == "None") return false;
  std::string d = dflt;
  if (d.size() >= 2 && (d.front() == '\'' || d.front() == '"') && d.back() == d.front()) d = d.substr(1, d.size() - 2);
  const std::string& v = f.values.front();
  if (v == d) return true;
  char *ve = nullptr, *de = nullptr;
  const double x = std::strtod(v.c_str(), &ve), y = std::strtod(d.c_str(), &de);
  return !v.empty() && !d.empty() && *ve == '\0' && *de == '\0' && x == y;
}

}  // namespace

const PastedFlag* CommandFlags::last(const std::string& canonical) const {
  for (auto it = flags.rbegin(); it != flags.rend(); ++it)
    if (it->row && it->row->flag == canonical) return &*it;
  return nullptr;
}

CommandFlags read_command_flags(const std::vector<std::string>& all_tokens, const std::string& where) {
  const CommandProgram prog = find_program(all_tokens, where);
  CommandFlags c;
  c.where = where;
  c.notes = prog.notes;
  c.stack = prog.stack;
  for (const auto& e : prog.env) c.flags.push_back(env_flag(e));
  const StackFlagTable& table = stack_flag_table(c.stack);
  const std::string release = c.stack == "vllm" ? "vLLM v0.11.0" : "SGLang v0.5.2";
  std::string model_tag;  // vllm serve MODEL
  auto positional = [&](const std::string& w) {
    if (prog.model_positional && model_tag.empty()) {
      model_tag = w;
      PastedFlag f;
      f.given = w;
      f.row = table.find("--model", where);
      f.values = {w};
      f.cls = f.row->cls, f.what = f.row->what;
      c.flags.push_back(f);
      return;
    }
    throw InputError("'" + w + "' is not a flag of " + release + " (a value without its flag?)", where);
  };
  const std::vector<std::string>& tokens = prog.args;
  std::size_t i = 0;
  while (i < tokens.size()) {
    const std::string tok = tokens[i++];
    if (!is_flag(tok)) {
      positional(tok);
      continue;
    }
    PastedFlag f;
    std::string name = tok, inline_value;
    bool has_inline = false;
    if (const auto eq = name.find('='); eq != std::string::npos)
      inline_value = name.substr(eq + 1), name = name.substr(0, eq), has_inline = true;
    const std::string pasted = name;
    const StackFlagTable::OlderSpelling* older = table.older_spelling(name);
    if (older && older->flag.empty()) {  // a switch of an earlier release that changes nothing now
      c.notes.push_back(name + " is ignored: " + older->why);
      if (has_inline) throw InputError("takes no value ('" + inline_value + "' given)", where + ": " + name);
      continue;
    }
    if (older) {
      c.notes.push_back(name + " read as " + older->flag + ": " + older->why);
      name = older->flag;
    }
    if (c.stack == "vllm" && name.rfind("--", 0) == 0)
      if (const auto dot = name.find('.'); dot != std::string::npos)
        f.sub = name.substr(dot + 1), name = name.substr(0, dot);
    f.given = older ? pasted : name;  // errors name the flag as pasted
    f.older_spelling = older != nullptr;
    if (older) f.since = older->since;
    // a later release's flag, before argparse's prefixes of this release's (it is no prefix there)
    const StackFlagTable::NewerFlag* later = older ? nullptr : table.newer_flag(name, &f.negated);
    if (later)
      f.row = &later->row, f.since = later->since;
    else
      f.row = table.find(name, where + ": " + name, &f.negated);
    if (!f.row && name.rfind("--", 0) != 0 && name.size() > 2) {  // -O3: a short flag with its value attached
      f.row = table.find(name.substr(0, 2), where);
      if (f.row) inline_value = name.substr(2), has_inline = true, f.given = name.substr(0, 2);
    }
    if (!f.row) {
      const std::string up_to = table.newer_release.empty() ? ""
                                                            : " or of a later release up to " + table.newer_release +
                                                                  " (" + table.newer_source + ")";
      throw InputError("'" + name + "' is not a flag of " + release + " (" + table.source + " lists them)" + up_to +
                           "; a typo, or a flag of another release: remove it and give what it changes as specsim's "
                           "own flags",
                       where);
    }
    f.cls = f.row->cls, f.what = f.row->what;
    const std::string at = where + ": " + f.given;
    const bool takes_none = f.row->arity == FlagArity::Switch || f.row->arity == FlagArity::Bool;
    if (takes_none && f.sub.empty()) {
      if (has_inline) throw InputError("takes no value ('" + inline_value + "' given)", at);
    } else if (has_inline) {
      f.values.push_back(inline_value);
    } else if (f.row->arity == FlagArity::List && f.sub.empty()) {
      while (i < tokens.size() && !is_flag(tokens[i])) f.values.push_back(tokens[i++]);
      if (f.values.empty()) throw InputError("needs one or more values", at);
    } else if (i < tokens.size() && !is_flag(tokens[i])) {
      f.values.push_back(tokens[i++]);
    } else if (f.row->arity != FlagArity::Optional) {
      throw InputError("needs a value", at);
    }
    // A class of its own for this value (--attention-backend fa3; a bool flag's on or off), else the flag's.
    if (!f.values.empty() && f.sub.empty()) {
      if (const FlagValueClass* v = f.row->for_value(f.last())) f.cls = v->cls, f.what = v->what;
    } else if (f.row->arity == FlagArity::Bool && f.sub.empty()) {
      if (const FlagValueClass* v = f.row->for_value(f.negated ? "off" : "on")) f.cls = v->cls, f.what = v->what;
    }
    // a later release's refused flag set to its own default changes nothing (--dcp-size 1)
    if (later && f.cls == FlagClass::Refused && f.sub.empty() && at_default(f, later->default_value))
      f.cls = FlagClass::Ignored, f.what = "its default in " + table.newer_release + ": as not given";
    c.flags.push_back(f);
  }
  std::string later;  // the later releases' flags, named once
  for (const auto& f : c.flags)
    if (!f.since.empty() && later.find(f.given + " (") == std::string::npos)
      later += (later.empty() ? "" : ", ") + f.given + " (" + f.since + ")";
  if (!later.empty())
    c.notes.push_back("flags of later releases than " + release + " (" + table.newer_source + "): " + later +
                      "; the run is priced on " + release + "'s terms" +
                      (c.stack == "sglang" ? ", but for the speculative worker, FlashInfer's all-reduce fusion and the "
                                             "draft shape SGLang picks when none is given, which follow the release "
                                             "the flags date it to"
                                           : ""));
  return c;
}

void refuse_unmodelled(const CommandFlags& c) {
  const PastedFlag* first = nullptr;
  std::string more;
  int n_more = 0;
  for (const auto& f : c.flags)
    if (f.cls == FlagClass::Refused) {
      if (!first)
        first = &f;
      else if (f.given != first->given)
        more += (n_more++ ? ", " : "") + f.given;
    }
  if (!first) return;
  // the value too where the stack takes one (--attention-backend triton: other values are priced)
  const std::string flag = !first->row             ? first->given + "=" + first->values.front()
                           : first->values.empty() ? first->given
                                                   : first->given + " " + first->last();
  std::string msg = "not modelled: " + flag + " changes " + first->what;
  if (n_more) msg += " (refused too: " + more + ")";
  msg += "; drop it to price the run without it";
  throw InputError(msg, c.where);
}

std::vector<std::string> applier_flags(const FlagAppliers& appliers) {
  std::vector<std::string> v;
  for (const auto& [k, _] : appliers) v.push_back(k);
  return v;
}

void apply_modelled(const FlagAppliers& appliers, const PastedFlag& f, RunArgs& a, std::vector<std::string>& notes,
                    const std::string& at) {
  const auto it = appliers.find(f.row->flag);
  if (it == appliers.end())
    throw InputError("the table marks " + f.row->flag + " modelled but nothing applies it", "models/stacks");
  it->second(f, a, notes, at);
}

}  // namespace specsim
