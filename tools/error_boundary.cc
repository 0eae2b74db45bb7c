#include "error_boundary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "util/error.h"
#include "util/utf8.h"

namespace specsim::cli {

// The error line stays one line of UTF-8 text whatever a path or name holds: control characters
// and bytes that are not UTF-8 (a file named $'\xff.json') are shown escaped (\n, \xff) instead
// of being printed, and a line above 1000 characters (a value echoed from a file) keeps its start
// and its end, where the flag or file is named.
std::string one_line(const std::string& s) {
  if (s.size() > 1000) return one_line(s.substr(0, 700)) + " ... " + one_line(s.substr(s.size() - 250));
  std::string out;
  for (const char c : escape_non_utf8(s)) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (u < 0x20 || u == 0x7f)
      out += fmt::format("\\x{:02x}", u);
    else
      out += c;
  }
  return out;
}

namespace {
constexpr const char* kOutOfMemory =
    "error: out of memory (ask for less: fewer sweep points or tune rows, --cycles, or smaller inputs; or run where "
    "more memory is free)\n";
}  // namespace

int error_boundary(const std::function<int()>& body) {
  try {
    return body();
  } catch (const InputError& e) {
    std::cerr << "error: " << one_line(e.line()) << "\n";
    return kExitBadInput;
  } catch (const EnvironmentError& e) {
    std::cerr << "error: " << one_line(e.line()) << "\n";
    return kExitEnvironment;
  } catch (const nlohmann::json::exception& e) {
    // A JSON input of the right syntax but the wrong shape that a reader did not check field by
    // field: still bad input, not a crash.
    std::cerr << "error: unexpected JSON content: " << one_line(e.what()) << " (check the input files)\n";
    return kExitBadInput;
  } catch (const std::bad_alloc&) {
    // The machine ran out of memory for what was asked (a grid, a number of cycles, an input
    // that expands in memory): say so instead of terminating.
    std::cerr << kOutOfMemory;
    return kExitEnvironment;
  } catch (const std::length_error&) {
    // A container asked for more than it can ever hold: the same shortage, not a crash.
    std::cerr << kOutOfMemory;
    return kExitEnvironment;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << one_line(e.what()) << "\n";
    return kExitInternal;
  }
}

int finish_stdout(int rc) {
  errno = 0;
  std::cout.flush();
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) != 0 || !std::cout.good();
  if (!failed) return rc;
  const int err = errno;
  std::cerr << "error: cannot write to stdout" << (err ? std::string(": ") + std::strerror(err) : std::string())
            << " (free space on its disk, or send stdout elsewhere)\n";
  return rc == kExitOk ? kExitEnvironment : rc;
}

namespace {

// One rule for every flag of every command, before CLI11 converts a value: an empty value
// (`--batch-size ""`, `--trace ""`) is refused rather than read as "not given", and an integer
// is decimal whatever its leading zeros (CLI11 would read `010` as octal 8, the sweep's lists as 10).
void harden_options(CLI::App& app) {
  for (CLI::Option* o : app.get_options()) {
    if (o->get_expected_max() == 0 || o->get_expected_min() == 0) continue;  // flags and optional values
    const std::string type = o->get_type_name();
    const bool integer = type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0;
    o->transform(CLI::Validator(
        [integer](std::string& v) -> std::string {
          if (v.empty()) return "an empty value: give a value, or leave the flag out";
          if (!integer) return "";
          const std::size_t sign = v[0] == '+' || v[0] == '-' ? 1 : 0, digits = v.find_first_not_of('0', sign);
          if (digits > sign && digits != std::string::npos &&
              v.find_first_not_of("0123456789", sign) == std::string::npos)
            v.erase(sign, digits - sign);  // 010 is ten
          return "";
        },
        ""));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) harden_options(*sub);
}

}  // namespace

int guarded(CLI::App& app, int argc, char** argv, const std::function<int()>& body) {
  return error_boundary([&] {
    try {
      harden_options(app);
      app.parse(argc, argv);
      return body();
    } catch (const CLI::CallForHelp&) {
      std::cout << app.help();
      return kExitOk;
    } catch (const CLI::CallForAllHelp&) {
      std::cout << app.help("", CLI::AppFormatMode::All);
      return kExitOk;
    } catch (const CLI::ExtrasError& e) {
      // A pasted launch command given to a command that takes none: say who reads it.
      if (std::find(argv + 1, argv + argc, std::string("--")) != argv + argc) {
        std::cerr << "error: only `specsim run` reads a launch command after --"
                  << (app.get_option_no_throw("--scenario") != nullptr
                          ? ": save it with `specsim run --hardware GPU:TOPOLOGY --save-scenario FILE -- COMMAND` and "
                            "give FILE to --scenario"
                          : "; this command takes none")
                  << " (" << app.get_name() << ")\n";
        return kExitBadInput;
      }
      // Name the first word not taken, in the order given (CLI11 lists them last first).
      const std::vector<std::string> left = app.remaining();
      const auto flag =
          std::find_if(left.begin(), left.end(), [](const std::string& w) { return w.rfind("-", 0) == 0; });
      const std::string cmd = app.get_name().empty() ? std::string("specsim") : app.get_name();
      if (flag != left.end())
        std::cerr << "error: '" << *flag << "' is not a flag of " << cmd << " (`" << cmd << " --help` lists them)\n";
      else if (!left.empty())
        std::cerr << "error: '" << left.front() << "' was not expected here: a value without its flag? (`" << cmd
                  << " --help` lists the flags)\n";
      else
        std::cerr << "error: " << one_line(e.what()) << " (run with --help for the flags)\n";
      return kExitBadInput;
    } catch (const CLI::ParseError& e) {
      std::cerr << "error: " << one_line(e.what()) << " (run with --help for the flags)\n";
      return kExitBadInput;
    }
  });
}

}  // namespace specsim::cli
