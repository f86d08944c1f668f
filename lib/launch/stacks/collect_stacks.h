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

namespace accel::launch::stacks {

struct RankStack {
  int rank = 0;
  pid_t pid = 0;
  int machine = 0;      // where it runs (a job of several machines: job_link.h gathers them)
  std::string host;     // that machine's host name
  std::string tool;     // "py-spy", "gdb", "eu-stack"
  std::string text;     // what the tool printed
  std::string summary;  // stack_summary.h's line
  std::string problem;  // why there is no stack: what to install, or the tool's complaint
  std::string flight;   // its flight recorder's record (lib/launch/flight/flight_text.h), or ""
};

// Every rank's stack in a job of one or several machines (lib/launch/job/stack_gatherings.h).
struct GatheredStacks {
  std::string why;                 // what stops the job once they are in; "" for `accel stacks`
  std::vector<RankStack> ranks;    // by rank
  std::vector<std::string> notes;  // what is missing: "machine 2 (h2) sent no stacks within 5.5 s"
  double seconds = 0;              // from the asking to the last stack
  int machines = 1;                // the machines asked
};

std::vector<RankStack> collectStacks(const std::vector<RunningRank>& ranks,
                                     const std::map<std::string, std::string>& env, std::chrono::milliseconds limit);

// One line per rank: "rank 1 (pid 4242): spin (train.py:4)" or "rank 1 (pid 4242): no stack: WHY";
// where the stacks come from several machines, "rank 1 (pid 4242 on machine 1, HOST): …".
std::vector<std::string> stackSummaryLines(const std::vector<RankStack>& stacks);

// Every stack in full, each under a "== rank R (pid P, TOOL) ==" heading ("(pid P on machine M,
// HOST, TOOL)" where they come from several machines).
std::string stacksText(const std::vector<RankStack>& stacks);

// Whether the stacks come from more than one machine.
bool severalMachines(const std::vector<RankStack>& stacks);

}  // namespace accel::launch::stacks
