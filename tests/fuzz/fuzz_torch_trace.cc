#include "fuzz_ingest.h"
#include "ingest/torch_trace.h"
// libFuzzer target: torch-profiler Chrome traces.
SPECSIM_TEXT_FUZZER(specsim::ingest::parse_torch_trace)
