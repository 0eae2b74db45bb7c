#include "diagnose/nccl_tests_gpu.h"

#include <cctype>
#include <regex>
#include <sstream>

#include "ingest/text_lines.h"

namespace specsim::diagnose {

std::string nccl_tests_other_gpu(const std::string& file, const std::string& profile) {
  const std::string text = ingest::read_text(file, "--nccl-tests");
  static const std::regex kDevice(R"(#\s*Rank\s+\d+\s.*\bdevice\s+\d+\s+\[[^\]]*\]\s+(.+))");
  std::smatch m;
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) {
    if (!std::regex_search(l, m, kDevice)) continue;
    std::string name = m[1].str();
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
    auto squash = [](const std::string& s) {
      std::string o;
      for (char c : s)
        if (std::isalnum(static_cast<unsigned char>(c)))
          o += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return o;
    };
    const std::string chip = squash(profile.substr(0, profile.find('-')));
    return squash(name).find(chip) == std::string::npos ? name : "";
  }
  return "";
}

}  // namespace specsim::diagnose
