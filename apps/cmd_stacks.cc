// SPDX-License-Identifier: Apache-2.0
// `accel stacks [JOB]`: every rank's current stack, for the job named by its launcher's pid or run
// id, or the only one running on this machine. The job's launcher here is asked (its socket,
// lib/launch/supervise/rank_questions.h): it gathers the stacks of every machine of the job; where it does
// not answer, this machine's ranks are read here (lib/launch/stacks/). Each stack in full, then
// one summary line per rank. Exit 0 when every rank's stack was read, 1 when some could not be
// (each says why and what to install), 2 when no job, or no single job, was named.
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <iostream>

#include <fmt/format.h>

#include "apps/commands.h"
#include "lib/common/environment.h"
#include "lib/common/error.h"
#include "lib/common/socket.h"
#include "lib/launch/job/job_messages.h"
#include "lib/launch/stacks/collect_stacks.h"
#include "lib/launch/stacks/stack_collector.h"

namespace accel {

namespace {

using Clock = std::chrono::steady_clock;

// How much longer than the tools' limit the launcher may take: machine 0 waits for the other
// machines, then sends everything.
constexpr auto kLauncherMargin = std::chrono::seconds(30);

}  // namespace

std::optional<launch::stacks::GatheredStacks> askLauncherStacks(const launch::stacks::RunningJob& job, double seconds,
                                                                std::string& why) {
  if (job.socket.empty()) {
    why = "its workers name no launcher socket";
    return std::nullopt;
  }
  const auto deadline = Clock::now() + defaults::fromSeconds(seconds) + kLauncherMargin;
  std::string error;
  const int fd = net::connectUnix(job.socket, deadline, error);
  if (fd < 0) {
    why = fmt::format("cannot reach it at {}: {}", job.socket, error);
    return std::nullopt;
  }
  const std::string question = fmt::format("stacks {:g}\n", seconds);
  const bool asked = ::write(fd, question.data(), question.size()) == static_cast<ssize_t>(question.size());
  const std::string answer = asked ? net::readUntilClosed(fd, deadline) : "";
  ::close(fd);
  auto stacks = launch::stacks::decodeStacks(answer);
  if (!stacks) why = answer.empty() ? "it gave no answer" : "it answered: " + answer.substr(0, answer.find('\n'));
  return stacks;
}

int runStacks(const std::string& job_selector, double timeout_seconds) {
  if (!(timeout_seconds > 0 && timeout_seconds <= launch::job::kMaxStackSeconds)) {
    throw UsageError(fmt::format("--timeout {:g}: not a number of seconds in (0, 600]", timeout_seconds));
  }
  const launch::stacks::RunningJob job = launch::stacks::selectJob(launch::stacks::findRunningJobs(), job_selector);
  const auto start = Clock::now();
  std::string why;
  std::optional<launch::stacks::GatheredStacks> stacks = askLauncherStacks(job, timeout_seconds, why);
  if (!stacks) {
    stacks.emplace();
    stacks->ranks =
        launch::stacks::collectStacks(job.ranks, processEnvironment(), defaults::fromSeconds(timeout_seconds));
  }
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  const std::string where =
      stacks->machines > 1 ? fmt::format("on {} machines", stacks->machines) : std::string("on this machine");
  std::cout << fmt::format("accel stacks: run {}, launcher pid {}, {} rank(s) {}, read in {:.2f} s\n", job.run_id,
                           job.launcher, stacks->ranks.size(), where, took);
  if (!why.empty())
    std::cout << "accel stacks: this machine's ranks only: the launcher did not answer: " << why << "\n";
  std::cout << launch::stacks::stacksText(stacks->ranks) << "summary:\n";
  bool all = stacks->notes.empty();
  for (const std::string& line : launch::stacks::stackSummaryLines(stacks->ranks)) std::cout << "  " << line << "\n";
  for (const std::string& note : stacks->notes) std::cout << "  " << note << "\n";
  for (const launch::stacks::RankStack& s : stacks->ranks) all = all && s.problem.empty();
  std::cout.flush();
  return all ? 0 : 1;
}

}  // namespace accel
