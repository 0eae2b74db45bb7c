// The factory: built-in backends by kind, registered ones by name.
#include <map>
#include <mutex>

#include "cost/allreduce_backends.h"
#include "util/error.h"

namespace specsim {

namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<AllReduceModel>, std::less<>> models;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

const AllReduceModel& allreduce_model(const AllReduceChoice& choice) {
  static const NcclAllReduce nccl;
  static const CustomAllReduce custom;
  static const FixedAllReduce fixed;
  switch (choice.kind) {
    case AllReduceChoice::Kind::Nccl: return nccl;
    case AllReduceChoice::Kind::Custom: return custom;
    case AllReduceChoice::Kind::Fixed: return fixed;
    case AllReduceChoice::Kind::Registered: break;
  }
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const auto it = r.models.find(choice.name);
  if (it == r.models.end())
    throw InputError("unknown all-reduce '" + choice.name + "': use nccl, custom[:VARIANT] or fixed:US", "--allreduce");
  return *it->second;  // entries are never removed, so the reference stays valid
}

void register_allreduce_backend(const std::string& name, AllReduceMaker make) {
  if (name.empty() || name == "nccl" || name == "custom" || name == "fixed")
    throw InputError("all-reduce backend name '" + name + "' is empty or built in", "--allreduce");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.models.count(name)) throw InputError("all-reduce backend '" + name + "' is already registered", "--allreduce");
  r.models.emplace(name, make());
}

InputError allreduce_refused(const AllReduceChoice& choice, const std::string& why) {
  return InputError(choice.kind_name() + " all-reduce refused: " + why + "; use --allreduce nccl or fixed:US",
                    "--allreduce");
}

}  // namespace specsim
