#include "fuzz_ingest.h"
#include "ingest/server_log.h"
// libFuzzer target: server logs, SGLang and vLLM (parse_server_log tells them apart).
SPECSIM_TEXT_FUZZER(specsim::ingest::parse_server_log)
