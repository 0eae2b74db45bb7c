#include "fuzz_ingest.h"
#include "ingest/nccl_tests.h"
// libFuzzer target: nccl-tests all_reduce_perf logs.
SPECSIM_TEXT_FUZZER(specsim::ingest::parse_nccl_tests)
