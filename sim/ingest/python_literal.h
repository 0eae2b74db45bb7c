#pragma once
// A Python literal as a server logs it with repr(): vLLM's `non-default args: {'model': 'x',
// 'tensor_parallel_size': 8, 'speculative_config': {'method': 'eagle3', ...}}`. Strings in either
// quote, numbers, True/False/None, lists, tuples and dicts become JSON; anything else (an object's
// repr such as `LoRAModulePath(name='a', ...)`) is kept as its text, a JSON string.
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

namespace specsim::ingest {

/// The literal that opens at text[0] and where it ends (one past its last character); nullopt when
/// it is not closed within `text` (a cut line).
struct PythonLiteral {
  nlohmann::json value;
  std::size_t end = 0;
};

std::optional<PythonLiteral> read_python_literal(std::string_view text);

}  // namespace specsim::ingest
