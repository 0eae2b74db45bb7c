#pragma once
// One libFuzzer entry point shape for every text parser: it must either parse or throw InputError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "util/error.h"

#define SPECSIM_TEXT_FUZZER(call)                                           \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { \
    const std::string text(reinterpret_cast<const char*>(data), size);      \
    try {                                                                   \
      (void)call(text, "fuzz");                                             \
    } catch (const specsim::InputError&) {                                  \
    }                                                                       \
    return 0;                                                               \
  }
