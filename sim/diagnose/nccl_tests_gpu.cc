#include "diagnose/nccl_tests_gpu.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <sstream>
#include <vector>

#include "ingest/text_lines.h"

namespace specsim::diagnose {

namespace {

// Lower-case words of letters and digits: "NVIDIA A100-SXM4-80GB" -> nvidia, a100, sxm4, 80gb.
std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::string w;
  for (char c : s + ' ')
    if (std::isalnum(static_cast<unsigned char>(c)))
      w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!w.empty())
      out.push_back(w), w.clear();
  return out;
}

}  // namespace

// Every part of the profile name a whole word of the device name ("h20" is not "h200", "b200" not
// "gb200"), the SXM form factor implicit (nvidia-smi names an H100 SXM "H100 80GB HBM3"), and a
// PCIe or NVL part not an SXM profile's.
bool nccl_tests_same_gpu(const std::string& device, const std::string& profile) {
  const auto dev = words(device), prof = words(profile);
  auto has = [&](const std::vector<std::string>& ws, const std::string& p) {
    return std::any_of(ws.begin(), ws.end(), [&](const std::string& w) {
      return w == p || (p == "sxm" && w.rfind("sxm", 0) == 0);  // SXM4, SXM5
    });
  };
  for (const auto& p : prof)
    if (p != "sxm" && !has(dev, p)) return false;
  for (const char* form : {"pcie", "nvl"})
    if (has(dev, form) && !has(prof, form)) return false;
  return true;
}

std::string nccl_tests_other_gpu(const std::string& file, const std::string& profile) {
  const std::string text = ingest::read_text(file, "--nccl-tests");
  static const std::regex kDevice(R"(#\s*Rank\s+\d+\s.*\bdevice\s+\d+\s+\[[^\]]*\]\s+(.+))");
  std::smatch m;
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) {
    if (!std::regex_search(l, m, kDevice)) continue;
    std::string name = m[1].str();
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
    return nccl_tests_same_gpu(name, profile) ? "" : name;
  }
  return "";
}

}  // namespace specsim::diagnose
