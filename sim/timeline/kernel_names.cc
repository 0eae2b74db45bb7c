#include "timeline/kernel_names.h"

#include "scenario/paths.h"
#include "util/error.h"
#include "util/json_io.h"

namespace specsim {

namespace {
constexpr const char* kFile = "models/runtime/kernel-names.json";

// table[group][key] when it is a string, else "".
std::string string_at(const nlohmann::json& table, const char* group, const std::string& key) {
  const auto g = table.find(group);
  if (g == table.end() || !g->is_object()) return "";
  const auto it = g->find(key);
  return it != g->end() && it->is_string() ? it->get<std::string>() : "";
}
}  // namespace

KernelNames::KernelNames(const std::string& runtime) : runtime_(runtime) {
  const std::string path = models_dir() + "/runtime/kernel-names.json";
  if (!is_file(path)) throw InputError(std::string("missing ") + kFile + ": reinstall models/", "--trace");
  const nlohmann::json j = read_json_file(path);
  if (!j.is_object() || !j.contains("runtimes") || !j["runtimes"].is_object())
    throw InputError("no \"runtimes\" object", std::string(kFile) + ":(top)");
  if (!j["runtimes"].contains(runtime) || !j["runtimes"][runtime].is_object())
    throw InputError("no kernel names for runtime '" + runtime + "': add them to " + kFile, "--runtime");
  table_ = j["runtimes"][runtime];
}

std::string KernelNames::name(const Op& op, const AllReduceChoice& backend) const {
  if (std::string s = string_at(table_, "by_op", op.name); !s.empty()) return s;
  if (op.kind == OpKind::AllReduce) {
    std::string key;
    switch (backend.kind) {
      case AllReduceChoice::Kind::Nccl: key = "nccl"; break;
      case AllReduceChoice::Kind::Custom: key = "custom"; break;
      case AllReduceChoice::Kind::Registered: key = backend.name; break;  // a table entry of its name, if any
      case AllReduceChoice::Kind::Fixed: return op.name;                  // a stated latency: no kernel to name
    }
    const std::string s = string_at(table_, "allreduce", key);
    return s.empty() ? std::string(op.name) : s;
  }
  const std::string s = string_at(table_, "by_kind", std::string(op_kind_name(op.kind)));
  return s.empty() ? std::string(op.name) : s;
}

}  // namespace specsim
