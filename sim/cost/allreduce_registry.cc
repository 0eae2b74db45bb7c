// The factory: one row per built-in backend, looked up by the name the choice carries
// (`--allreduce NAME[:ARG]`), then the backends registered at run time.
#include <map>
#include <mutex>

#include "cost/allreduce_backends.h"
#include "cost/stack_allreduce.h"
#include "util/error.h"

namespace specsim {

namespace {

template <class Model>
const AllReduceModel& instance() {
  static const Model m;
  return m;
}

template <Stack S>
const AllReduceModel& stack_instance() {
  static const StackAllReduce m(S);
  return m;
}

/// The built-in backends. A new model-only backend is one row here and its own file.
struct BuiltIn {
  const char* name;
  const AllReduceModel& (*model)();
};
constexpr BuiltIn kBuiltIn[] = {
    {"nccl", instance<NcclAllReduce>},
    {"custom", instance<CustomAllReduce>},
    {"fixed", instance<FixedAllReduce>},
    {"sglang", stack_instance<Stack::Sglang>},  // the serving stacks' own all-reduce (stack_allreduce.h)
    {"vllm", stack_instance<Stack::Vllm>},
};

struct Registry {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<AllReduceModel>, std::less<>> models;
};

Registry& registry() {
  static Registry r;
  return r;
}

const BuiltIn* built_in(const std::string& name) {
  for (const auto& b : kBuiltIn)
    if (name == b.name) return &b;
  return nullptr;
}

}  // namespace

const AllReduceModel& allreduce_model(const AllReduceChoice& choice) {
  const std::string name = choice.kind_name();
  if (const BuiltIn* b = built_in(name)) return b->model();
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const auto it = r.models.find(name);
  if (it == r.models.end())
    throw InputError("unknown all-reduce '" + name + "': use nccl, custom[:VARIANT], sglang, vllm or fixed:US",
                     "--allreduce");
  return *it->second;  // entries are never removed, so the reference stays valid
}

void register_allreduce_backend(const std::string& name, AllReduceMaker make) {
  if (name.empty() || built_in(name))
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
