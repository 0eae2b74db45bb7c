// libFuzzer target: the UTF-8 check and escape every error line and trace name goes through
// (file names are bytes). Whatever the bytes: the escape is valid UTF-8, valid text is kept as
// is, and a JSON output holding them dumps without throwing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "util/json_io.h"
#include "util/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string s(reinterpret_cast<const char*>(data), size);
  const std::string e = specsim::escape_non_utf8(s);
  if (!specsim::is_utf8(e)) std::abort();
  if (specsim::is_utf8(s) != (e == s)) std::abort();
  // The output dump keeps valid JSON whatever the path holds.
  const nlohmann::json j = {{"path", s}, {s, 1}};
  const std::string text = specsim::dump_json(j);
  if (!specsim::is_utf8(text)) std::abort();
  (void)nlohmann::json::parse(text);
  return 0;
}
