// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/stacks/collect_stacks.h"

#include <fmt/format.h>

#include "lib/common/process/child_process.h"
#include "lib/common/strings.h"
#include "lib/launch/stacks/stack_summary.h"
#include "lib/launch/stacks/stack_tools.h"

namespace accel::launch::stacks {

namespace {

std::string lastLine(const std::string& text) {
  std::vector<std::string> lines = split(trim(text), '\n');
  return lines.empty() ? "" : trim(lines.back());
}

// A tool's failure is the rank's problem only when it printed no frame: gdb exits 1 after a
// command that failed (the collective in a program without libaccel_runtime) and a stack.
void finish(RankStack& s, const process::Captured& c, bool python, std::chrono::milliseconds limit) {
  s.summary = python ? summarizePythonStack(c.output) : summarizeNativeStack(c.output);
  if (c.timed_out) {
    s.problem = fmt::format("{} did not finish within {:g} s", s.tool, limit.count() / 1000.0);
  } else if (c.status != 0 && s.summary.empty()) {
    s.problem = fmt::format("{} failed (exit {}): {}", s.tool, c.status, lastLine(c.output));
  }
  for (const std::string& line : split(c.output, '\n')) {  // gdb on a program without libaccel_runtime
    if (line.find("\"accel_collective_now\"") == std::string::npos) s.text += line + "\n";
  }
  if (s.problem.empty() && s.summary.empty()) s.problem = s.tool + " printed no frame: " + lastLine(c.output);
}

}  // namespace

std::vector<RankStack> collectStacks(const std::vector<RunningRank>& ranks,
                                     const std::map<std::string, std::string>& env, std::chrono::milliseconds limit) {
  std::vector<RankStack> out;
  std::vector<StackCommand> commands;
  std::vector<std::vector<std::string>> argvs;
  for (const RunningRank& r : ranks) {
    StackCommand c = stackCommand(r.pid, env);
    RankStack s;
    s.rank = r.rank;
    s.pid = r.pid;
    s.tool = c.tool;
    s.problem = c.missing;
    out.push_back(std::move(s));
    if (!c.argv.empty()) argvs.push_back(c.argv);
    commands.push_back(std::move(c));
  }
  const std::vector<process::Captured> captured = process::captureOutputs(argvs, limit, true);
  for (size_t i = 0, k = 0; i < out.size(); ++i) {
    if (!commands[i].argv.empty()) finish(out[i], captured[k++], commands[i].python, limit);
  }
  return out;
}

bool severalMachines(const std::vector<RankStack>& stacks) {
  for (const RankStack& s : stacks) {
    if (s.machine != stacks.front().machine) return true;
  }
  return false;
}

namespace {

// "pid 4242", or "pid 4242 on machine 1, HOST" where the stacks span machines.
std::string where(const RankStack& s, bool several) {
  return several ? fmt::format("pid {} on machine {}, {}", s.pid, s.machine, s.host) : fmt::format("pid {}", s.pid);
}

}  // namespace

std::vector<std::string> stackSummaryLines(const std::vector<RankStack>& stacks) {
  std::vector<std::string> lines;
  const bool several = severalMachines(stacks);
  for (const RankStack& s : stacks) {
    lines.push_back(fmt::format("rank {} ({}): {}", s.rank, where(s, several),
                                s.problem.empty() ? s.summary : "no stack: " + s.problem));
  }
  return lines;
}

std::string stacksText(const std::vector<RankStack>& stacks) {
  std::string out;
  const bool several = severalMachines(stacks);
  for (const RankStack& s : stacks) {
    out += fmt::format("== rank {} ({}, {}) ==\n", s.rank, where(s, several), s.tool.empty() ? "no tool" : s.tool);
    out += s.problem.empty() ? s.text : "no stack: " + s.problem + "\n" + s.text;
    if (!out.empty() && out.back() != '\n') out += '\n';
  }
  return out;
}

}  // namespace accel::launch::stacks
