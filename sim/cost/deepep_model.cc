#include "cost/deepep_model.h"

#include <cmath>
#include <string>

#include "scenario/paths.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

double DeepEPModel::table_us(int ep, bool combine) const {
  const auto& t = combine ? ll_combine_us : ll_dispatch_us;
  const auto hi = t.lower_bound(ep);
  if (hi == t.end()) return std::prev(t.end())->second;
  if (hi->first == ep || hi == t.begin()) return hi->second;
  const auto lo = std::prev(hi);
  const double f = (std::log2(double(ep)) - std::log2(double(lo->first))) /
                   (std::log2(double(hi->first)) - std::log2(double(lo->first)));
  return lo->second + f * (hi->second - lo->second);
}

double DeepEPModel::table_bytes(bool combine) const {
  return ll_table_tokens * ll_topk * ll_hidden * (combine ? 2.0 : 1.0 + 4.0 / 128.0);
}

double DeepEPModel::us(double bytes, int ep, bool combine, bool low_latency) const {
  if (ep <= 1 || bytes <= 0) return 0;
  if (!low_latency) return normal_fixed_us + bytes / ((combine ? normal_combine_gbps : normal_dispatch_gbps) * 1e3);
  const double table = table_us(ep, combine);
  return ll_fixed_us + (table - ll_fixed_us) * bytes / table_bytes(combine);
}

const DeepEPModel& deepep_model() {
  static const DeepEPModel m = [] {
    const std::string path = models_dir() + "/kernels/deepep.json";
    const std::string file = "models/kernels/deepep.json";
    const nlohmann::json j = read_json_file(path);
    for (const char* k : {"low_latency", "normal"})
      if (!j.is_object() || !j.contains(k) || !j[k].is_object())
        throw InputError(path + ": needs an object \"" + k + "\"", file);
    const nlohmann::json& ll = j["low_latency"];
    const nlohmann::json& nm = j["normal"];
    DeepEPModel r;
    const std::string w = path + ": ";
    r.ll_table_tokens = sourced_number(ll, "table_tokens_per_rank", w + "low_latency");
    r.ll_hidden = sourced_number(ll, "table_hidden", w + "low_latency");
    r.ll_topk = sourced_number(ll, "table_topk", w + "low_latency");
    r.ll_fixed_us = sourced_number(ll, "fixed_us", w + "low_latency");
    if (!ll.contains("points") || !ll["points"].is_object() || ll["points"].empty())
      throw InputError(path + ": low_latency needs \"points\": EP size -> dispatch_us, combine_us", file);
    for (const auto& item : ll["points"].items()) {
      const std::string at = w + "low_latency.points." + item.key();
      int ep = 0;
      try {
        ep = std::stoi(item.key());
      } catch (...) {
        throw InputError(at + ": the key must be an EP size", file);
      }
      if (ep < 2 || !item.value().is_object()) throw InputError(at + ": an EP size of 2 or more with an object", file);
      r.ll_dispatch_us[ep] = sourced_number(item.value(), "dispatch_us", at);
      r.ll_combine_us[ep] = sourced_number(item.value(), "combine_us", at);
      if (r.ll_dispatch_us[ep] <= r.ll_fixed_us || r.ll_combine_us[ep] <= r.ll_fixed_us)
        throw InputError(at + ": a latency at or below fixed_us", file);
    }
    r.normal_dispatch_gbps = sourced_number(nm, "dispatch_gbps", w + "normal");
    r.normal_combine_gbps = sourced_number(nm, "combine_gbps", w + "normal");
    r.normal_fixed_us = sourced_number(nm, "fixed_us", w + "normal");
    if (r.ll_table_tokens <= 0 || r.ll_hidden <= 0 || r.ll_topk <= 0 || r.normal_dispatch_gbps <= 0 ||
        r.normal_combine_gbps <= 0 || r.ll_fixed_us < 0 || r.normal_fixed_us < 0)
      throw InputError(path + ": sizes and bandwidths must be positive", file);
    return r;
  }();
  return m;
}

}  // namespace specsim
