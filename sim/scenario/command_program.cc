#include "scenario/command_program.h"

#include <algorithm>
#include <regex>

#include "util/error.h"

namespace specsim {

namespace {

const std::regex& prog_env_assignment() {
  static const std::regex kEnv(R"([A-Za-z_][A-Za-z0-9_]*=.*)");
  return kEnv;
}

std::string prog_basename(const std::string& w) {
  const auto slash = w.find_last_of('/');
  return slash == std::string::npos ? w : w.substr(slash + 1);
}

bool prog_is_python(const std::string& w) {
  static const std::regex kPython(R"(python[0-9]*(\.[0-9]+)?)");
  return std::regex_match(prog_basename(w), kPython);
}

// Where a wrapper's own words end: the interpreter or a stack's own command.
bool prog_starts_program(const std::string& w) {
  const std::string b = prog_basename(w);
  return prog_is_python(w) || b == "vllm" || b == "sglang";
}

// A shell operator: what follows it is another command, or where the output goes.
bool prog_is_shell_operator(const std::string& w) {
  static const std::regex kOp(R"((\||\|\||&&|;|&|[0-9]?>>?.*|&>.*))");
  return std::regex_match(w, kOp);
}

const char* const kKnownLaunchers =
    "python -m sglang.launch_server, sglang serve, vllm serve MODEL, python -m vllm.entrypoints.openai.api_server";

}  // namespace

CommandProgram find_program(const std::vector<std::string>& all, const std::string& where) {
  CommandProgram p;
  std::vector<std::string> t;
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (all[k] == "\\") continue;  // a line continuation pasted as a word
    if (prog_is_shell_operator(all[k])) {
      p.notes.push_back("the command ends at '" + all[k] + "' (a shell operator): what follows is not read");
      break;
    }
    t.push_back(all[k]);
  }
  std::size_t i = 0;
  // Wrappers, in any order: NAME=VALUE, env, nohup, exec, time, docker/podman run|exec OPTIONS IMAGE.
  while (i < t.size()) {
    if (std::regex_match(t[i], prog_env_assignment())) {
      p.env.push_back(t[i++]);
      continue;
    }
    const std::string b = prog_basename(t[i]);
    if (b == "env" || b == "nohup" || b == "exec" || b == "time") {
      ++i;
      continue;
    }
    if ((b == "docker" || b == "podman") && i + 1 < t.size() && (t[i + 1] == "run" || t[i + 1] == "exec")) {
      i += 2;
      // its options and the image, up to the program inside; -e / --env set the container's environment
      while (i < t.size() && !prog_starts_program(t[i])) {
        const std::string& o = t[i];
        if ((o == "-e" || o == "--env") && i + 1 < t.size()) {
          if (std::regex_match(t[i + 1], prog_env_assignment())) p.env.push_back(t[i + 1]);
          i += 2;
          continue;
        }
        for (const char* pre : {"--env=", "-e="})
          if (o.rfind(pre, 0) == 0 && std::regex_match(o.substr(std::string(pre).size()), prog_env_assignment()))
            p.env.push_back(o.substr(std::string(pre).size()));
        ++i;
      }
      if (i == t.size())
        throw InputError("'" + b + " " + t[1] + "' without a launch command inside (" + kKnownLaunchers + ")", where);
      p.notes.push_back("the " + b + " wrapper's options and image are not read; the command inside is");
      continue;
    }
    break;
  }
  if (i == t.size() || t[i].rfind("-", 0) == 0) {  // flags alone: SGLang's, as --sglang-args has always read them
    p.args.assign(t.begin() + static_cast<std::ptrdiff_t>(i), t.end());
    return p;
  }
  static const std::regex kOutputFile(R"(.*\.(json|csv|png|svg|yaml|yml|txt|log))", std::regex::icase);
  if (std::regex_match(t[i], kOutputFile))
    throw InputError("'" + t[i] + "' is a file name where a launch command goes (" + kKnownLaunchers + ")" +
                         (where == "-- COMMAND" ? ": a flag's file goes right after that flag (--trace FILE), and "
                                                  "--json prints to stdout"
                                                : ""),
                     where);
  const std::size_t start = i;
  const std::string b = prog_basename(t[i]);
  if (prog_is_python(t[i])) {
    ++i;
    // the interpreter's own options (-u, -O, -X dev, -W error, ...) before -m or a script
    while (i < t.size() && t[i].rfind("-", 0) == 0 && t[i] != "-m") i += t[i] == "-X" || t[i] == "-W" ? 2 : 1;
    if (i < t.size() && t[i] == "-m" && i + 1 < t.size()) {
      const std::string& module = t[i + 1];
      if (module == "sglang.launch_server")
        p.stack = "sglang";
      else if (module.rfind("vllm.entrypoints", 0) == 0 || module == "vllm")
        p.stack = "vllm";
      else
        throw InputError("'python -m " + module + "' is not SGLang's or vLLM's server, the two stacks specsim reads (" +
                             kKnownLaunchers + ")",
                         where);
      i += 2;
    } else {
      const std::string script = i < t.size() ? t[i] : "";
      throw InputError("'" + (script.empty() ? t[start] : t[start] + " " + script) + "' is not a server launch (" +
                           kKnownLaunchers +
                           "): a benchmark script's server flags go in the server's own command, and "
                           "bench_speculative.py's results to `specsim ingest --bench-speculative`",
                       where);
    }
  } else if (b == "vllm" || b == "sglang") {
    p.stack = b;
    ++i;
    if (i < t.size() && t[i] == "serve") ++i;
  } else if (b.size() > 3 && b.compare(b.size() - 3, 3, ".sh") == 0) {
    // a site's own wrapper script: its flags are passed on to SGLang's launch_server
    ++i;
    p.notes.push_back("'" + t[start] + "' read as a wrapper of SGLang's launch_server: its flags as SGLang's");
  } else {
    throw InputError("'" + t[i] + "' is not SGLang's or vLLM's launch command, the two stacks specsim reads (" +
                         kKnownLaunchers + ")",
                     where);
  }
  p.words.assign(t.begin() + static_cast<std::ptrdiff_t>(start), t.begin() + static_cast<std::ptrdiff_t>(i));
  p.args.assign(t.begin() + static_cast<std::ptrdiff_t>(i), t.end());
  return p;
}

}  // namespace specsim
