#include "fuzz_ingest.h"
#include "ingest/sglang_log.h"
// libFuzzer target: SGLang server logs.
SPECSIM_TEXT_FUZZER(specsim::ingest::parse_sglang_log)
