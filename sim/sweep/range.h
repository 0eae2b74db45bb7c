#pragma once
// The sweep's value lists: the flag value lists of scenario/flag_values.h, in the sweep's namespace.
#include "scenario/flag_values.h"

namespace specsim::sweep {

using specsim::kMaxAxisValues;
using specsim::parse_allreduce_values;
using specsim::parse_double_values;
using specsim::parse_int_values;
using specsim::parse_measurement;
using specsim::parse_word_values;

}  // namespace specsim::sweep
