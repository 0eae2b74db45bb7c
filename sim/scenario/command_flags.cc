#include "scenario/command_flags.h"

#include <cctype>
#include <regex>

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

// Environment assignments pasted before the program: the NCCL ones specsim models, the GPU
// selection that only picks GPUs of the box --hardware names; any other is refused.
PastedFlag env_flag(const std::string& tok) {
  PastedFlag f;
  f.given = tok.substr(0, tok.find('='));
  f.values = {tok.substr(tok.find('=') + 1)};
  if (f.given == "NCCL_P2P_LEVEL" || f.given == "NCCL_ALGO" || f.given == "NCCL_PROTO")
    f.cls = FlagClass::Modelled, f.what = "NCCL's choice, as --nccl-p2p-level / --nccl-algo / --nccl-proto";
  else if (f.given == "CUDA_VISIBLE_DEVICES")
    f.cls = FlagClass::Ignored, f.what = "which GPUs of the box (--hardware names the box)";
  else
    f.cls = FlagClass::Refused, f.what = "the stack's or NCCL's behaviour through the environment";
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

const PastedFlag* CommandFlags::last(const std::string& canonical) const {
  for (auto it = flags.rbegin(); it != flags.rend(); ++it)
    if (it->row && it->row->flag == canonical) return &*it;
  return nullptr;
}

CommandFlags read_command_flags(const std::vector<std::string>& tokens, const std::string& where) {
  static const std::regex kEnv(R"([A-Za-z_][A-Za-z0-9_]*=.*)");
  CommandFlags c;
  c.where = where;
  std::size_t i = 0;
  std::vector<PastedFlag> env;
  while (i < tokens.size() && !is_flag(tokens[i]) && std::regex_match(tokens[i], kEnv))
    env.push_back(env_flag(tokens[i++]));
  // The program: words up to the first flag (python -m MODULE counts its -m).
  std::vector<std::string> program;
  while (i < tokens.size() && (!is_flag(tokens[i]) || tokens[i] == "-m")) program.push_back(tokens[i++]);
  // A file name where the program goes is no command: most often an output given to a flag that
  // takes none (`--json out.json`), which would otherwise read as a command without flags.
  if (!program.empty()) {
    static const std::regex kOutputFile(R"(.*\.(json|csv|png|svg|yaml|yml|txt|log))", std::regex::icase);
    if (std::regex_match(program.front(), kOutputFile))
      throw InputError("'" + program.front() + "' is a file name where a launch command goes (python -m " +
                           "sglang.launch_server ... or vllm serve MODEL ...)" +
                           (where == "-- COMMAND"
                                ? ": a flag's file goes right after that flag (--trace FILE), and --json prints to "
                                  "stdout"
                                : ""),
                       where);
  }
  c.stack = "sglang";  // flags alone: SGLang's, as --sglang-args has always read them
  for (const auto& w : program)
    if (w.find("vllm") != std::string::npos) c.stack = "vllm";
  const StackFlagTable& table = stack_flag_table(c.stack);
  const std::string release = c.stack == "vllm" ? "vLLM v0.11.0" : "SGLang v0.5.2";
  c.flags = env;
  std::string model_tag;  // vllm serve MODEL
  auto positional = [&](const std::string& w) {
    if (c.stack == "vllm" && model_tag.empty() && w != "serve" && w.find("vllm") == std::string::npos) {
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
  for (std::size_t p = 0; p < program.size(); ++p)
    if (program[p] == "-m")
      ++p;
    else if (c.stack == "vllm" && p > 0 && program[p - 1] == "serve")
      positional(program[p]);
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
    if (c.stack == "vllm" && name.rfind("--", 0) == 0)
      if (const auto dot = name.find('.'); dot != std::string::npos)
        f.sub = name.substr(dot + 1), name = name.substr(0, dot);
    f.given = name;
    f.row = table.find(name, where + ": " + name, &f.negated);
    if (!f.row && name.rfind("--", 0) != 0 && name.size() > 2) {  // -O3: a short flag with its value attached
      f.row = table.find(name.substr(0, 2), where);
      if (f.row) inline_value = name.substr(2), has_inline = true, f.given = name.substr(0, 2);
    }
    if (!f.row)
      throw InputError("'" + name + "' is not a flag of " + release + " (" + table.source +
                           " lists them); a typo, or a later release's flag: remove it and give what it changes as "
                           "specsim's own flags",
                       where);
    f.cls = f.row->cls, f.what = f.row->what;
    const std::string at = where + ": " + name;
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
    c.flags.push_back(f);
  }
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
  const std::string flag = first->row ? first->given : first->given + "=" + first->values.front();
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
