#include "scenario/command_program.h"

#include <algorithm>
#include <regex>
#include <set>

#include "util/error.h"
#include "util/text.h"

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

// A shell operator: what follows it is another command, or where the output goes.
bool prog_is_shell_operator(const std::string& w) {
  static const std::regex kOp(R"((\||\|\||&&|;|&|[0-9]?>>?.*|&>.*))");
  return std::regex_match(w, kOp);
}

// A set-up command chained before the launch: cd, export, source, conda/module activation, ulimit.
bool prog_is_setup(const std::vector<std::string>& t) {
  if (t.empty()) return false;
  static const std::set<std::string> kSetup = {"cd", "export", "source", ".", "conda", "module", "ulimit", "set"};
  return kSetup.count(t.front()) != 0;
}

const char* const kKnownLaunchers =
    "python -m sglang.launch_server, sglang serve, vllm serve MODEL, python -m vllm.entrypoints.openai.api_server";

// docker/podman run|exec at t[i]: skips their options (those known to take no value; any other
// takes one unless written OPT=VALUE) and the image (exec: the container), reading -e / --env as
// the container's environment and --entrypoint as its program. Returns where the words inside
// start; with no command after the image, a vLLM image's entrypoint (vllm serve) is put there.
std::size_t prog_skip_container(std::vector<std::string>& t, std::size_t i, CommandProgram& p,
                                const std::string& where) {
  static const std::set<std::string> kNoValue = {"--rm",
                                                 "-d",
                                                 "--detach",
                                                 "-i",
                                                 "--interactive",
                                                 "-t",
                                                 "--tty",
                                                 "-it",
                                                 "-ti",
                                                 "-dit",
                                                 "-itd",
                                                 "--privileged",
                                                 "--init",
                                                 "-P",
                                                 "--publish-all",
                                                 "--read-only",
                                                 "--no-healthcheck",
                                                 "--oom-kill-disable"};
  const std::string tool = prog_basename(t[i]) + " " + t[i + 1];
  i += 2;
  std::string entrypoint;
  while (i < t.size() && t[i].rfind("-", 0) == 0) {
    const std::string o = t[i];
    const auto eq = o.find('=');
    std::string name = o, value;
    if (eq != std::string::npos) {
      name = o.substr(0, eq), value = o.substr(eq + 1), ++i;
    } else if (kNoValue.count(o) != 0) {
      ++i;
      continue;
    } else {
      if (i + 1 >= t.size()) break;
      value = t[i + 1], i += 2;
    }
    if ((name == "-e" || name == "--env") && std::regex_match(value, prog_env_assignment())) p.env.push_back(value);
    if (name == "--entrypoint") entrypoint = value;
  }
  if (i >= t.size())
    throw InputError("'" + tool + "' without an image and a launch command (" + kKnownLaunchers + ")", where);
  const std::string image = t[i++];
  p.notes.push_back("the " + tool + " wrapper's options and image are not read; the command inside is");
  if (!entrypoint.empty()) {
    t.insert(t.begin() + static_cast<std::ptrdiff_t>(i), entrypoint);  // runs with the words after the image
  } else if (i == t.size() || t[i].rfind("-", 0) == 0) {
    // no command: the image's own entrypoint, which only vLLM's images make a server launch
    if (ascii_lower(image).find("vllm") == std::string::npos)
      throw InputError("'" + tool + " ... " + image +
                           "' runs the image's own entrypoint, which the command does not show: paste the launch "
                           "command it runs (" +
                           kKnownLaunchers + ")",
                       where);
    t.insert(t.begin() + static_cast<std::ptrdiff_t>(i), {"vllm", "serve"});
    p.notes.push_back("the image " + image + " runs its entrypoint, vllm serve, with the words after it");
  }
  return i;
}

}  // namespace

CommandProgram find_program(const std::vector<std::string>& all, const std::string& where) {
  CommandProgram p;
  std::vector<std::string> t;
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (all[k] == "\\") continue;  // a line continuation pasted as a word
    // set-up commands chained before the launch (cd DIR &&, export NAME=VALUE;): skipped, their
    // exports kept as the launch's environment
    if ((all[k] == "&&" || all[k] == ";") && prog_is_setup(t)) {
      for (std::size_t e = 1; t.front() == "export" && e < t.size(); ++e)
        if (std::regex_match(t[e], prog_env_assignment())) p.env.push_back(t[e]);
      p.notes.push_back("'" + t.front() + " ...' before '" + all[k] + "' is set-up: the command after it is read");
      t.clear();
      continue;
    }
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
      // their own options (env -i, env -u NAME, time -p)
      while (i < t.size() && t[i].rfind("-", 0) == 0)
        i += b == "env" && (t[i] == "-u" || t[i] == "--unset" || t[i] == "-C" || t[i] == "--chdir") ? 2 : 1;
      continue;
    }
    if ((b == "docker" || b == "podman") && i + 1 < t.size() && (t[i + 1] == "run" || t[i + 1] == "exec")) {
      // the environment set around the container is the host's, not the server's
      for (const auto& e : p.env)
        p.notes.push_back(e.substr(0, e.find('=')) + " is set outside the container: not read (docker's -e sets it)");
      p.env.clear();
      i = prog_skip_container(t, i, p, where);
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
      // python -m vllm.entrypoints.cli.main serve MODEL: the CLI's serve
      if (p.stack == "vllm" && i < t.size() && t[i] == "serve") ++i, p.model_positional = true;
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
    if (i < t.size() && t[i] == "serve") ++i, p.model_positional = b == "vllm";
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
