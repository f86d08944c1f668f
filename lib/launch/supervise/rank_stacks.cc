// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/rank_stacks.h"

#include <fmt/format.h>

#include "lib/common/atomic_file.h"
#include "lib/common/environment.h"
#include "lib/common/error.h"
#include "lib/common/temporary_folder.h"
#include "lib/launch/job/job_round.h"

namespace accel::launch::supervise {

namespace {
// How much longer than the job's gathering a machine holds its stop: the job's Stop crosses the
// channel after it.
constexpr double kHoldMargin = 2;
}  // namespace

void RankStacks::collect(long long id, double seconds) {
  waiting_.push_back(id);
  if (collector_.running()) return;  // its result answers this one too
  std::vector<stacks::RunningRank> ranks;
  for (const auto& w : workers_) {
    if (w.running && w.spec && w.spec->label.empty()) ranks.push_back({w.spec->rank, w.pid});
  }
  collector_.start(ranks, processEnvironment(), defaults::fromSeconds(seconds));
}

void RankStacks::addPollFds(std::vector<pollfd>& fds, int& timeout_ms) const {
  collector_.addPollFds(fds, timeout_ms);
  if (!stop_due_) return;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(*stop_due_ - std::chrono::steady_clock::now());
  const int due = static_cast<int>(std::max<long long>(0, left.count()));
  if (timeout_ms < 0 || due < timeout_ms) timeout_ms = due;
}

bool RankStacks::holdStop(const job::WorkerFailure& failure) {
  if (plan_.stacks_timeout <= 0 || !job::timedOutInCollective(failure)) return false;
  const double wait = plan_.stacks_timeout + defaults::kStacksSlackSeconds + kHoldMargin;
  stop_due_ = std::chrono::steady_clock::now() + defaults::fromSeconds(wait);
  return true;
}

void RankStacks::service(const std::vector<pollfd>& fds) {
  auto stacks = collector_.service(fds);
  if (!stacks) return;
  for (long long id : std::exchange(waiting_, {})) link_.stacksCollected(id, *stacks);
}

bool RankStacks::follow(const job::JobEvent& event, int round) {
  if (event.kind == job::JobEvent::Kind::Collect) {
    collect(event.id, event.seconds);
    return true;
  }
  if (event.kind != job::JobEvent::Kind::Stacks || event.id != 0) return false;
  summary_ = stacksSummary(*event.stacks, keep(*event.stacks, round));
  return true;
}

// Every stack in full, in a file of the round; returns "in full: PATH", or why there is none.
std::string RankStacks::keep(const stacks::GatheredStacks& stacks, int round) const {
  const std::string run_dir = run_dir_.empty() ? temporaryDirectory() + "/" + plan_.run_id : run_dir_;
  const std::string path = fmt::format("{}/attempt_{}/stacks.txt", run_dir, round);
  std::string text = fmt::format("# {}\n# read in {:.2f} s\n", stacks.why, stacks.seconds);
  for (const std::string& note : stacks.notes) text += "# " + note + "\n";
  text += stacks::stacksText(stacks.ranks);
  try {
    writeFileAtomic(path, text, true);
  } catch (const Error& e) {
    return fmt::format("not kept: {}", e.what());
  }
  return "in full: " + path;
}

std::vector<std::string> stacksSummary(const stacks::GatheredStacks& stacks, const std::string& kept_in) {
  std::vector<std::string> lines = {
      fmt::format("where each rank was before the stop (stacks read in {:.2f} s; {}):", stacks.seconds, kept_in)};
  for (const std::string& line : stacks::stackSummaryLines(stacks.ranks)) lines.push_back("  " + line);
  for (const std::string& note : stacks.notes) lines.push_back("  " + note);
  if (stacks.ranks.empty() && stacks.notes.empty()) lines.push_back("  no rank was running");
  return lines;
}

}  // namespace accel::launch::supervise
