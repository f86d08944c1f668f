// SPDX-License-Identifier: Apache-2.0
// Every rank's current stack at once (stack_tools.h chooses each tool), within a time limit that
// holds whatever the tools do: a missing tool, one that fails or one that hangs becomes that
// rank's `problem`, never a wait.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "lib/launch/stacks/running_jobs.h"

namespace accel {

struct RankStack {
  int rank = 0;
  pid_t pid = 0;
  std::string tool;     // "py-spy", "gdb", "eu-stack"
  std::string text;     // what the tool printed
  std::string summary;  // stack_summary.h's line
  std::string problem;  // why there is no stack: what to install, or the tool's complaint
};

std::vector<RankStack> collectStacks(const std::vector<RunningRank>& ranks,
                                     const std::map<std::string, std::string>& env, std::chrono::milliseconds limit);

// One line per rank: "rank 1 (pid 4242): spin (train.py:4)" or "rank 1 (pid 4242): no stack: WHY".
std::vector<std::string> stackSummaryLines(const std::vector<RankStack>& stacks);

// Every stack in full, each under a "== rank R (pid P, TOOL) ==" heading.
std::string stacksText(const std::vector<RankStack>& stacks);

}  // namespace accel
