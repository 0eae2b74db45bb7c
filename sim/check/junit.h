#pragma once
// `specsim check --junit FILE`: the compared figures as JUnit XML, the format CI systems (GitHub
// Actions reporters, GitLab, Jenkins) read test results in. One testcase per figure; a regressed
// figure is a <failure>, a worse figure the gate does not cover passes with its note.
#include <string>
#include <vector>

#include "check/check.h"

namespace specsim::check {

/// The XML document of the rows, the gate and what was compared (c: baseline, change under test).
std::string check_junit(const std::vector<CheckRow>& rows, Gate gate, double tolerance, const CheckContext& c);

}  // namespace specsim::check
