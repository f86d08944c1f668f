// SPDX-License-Identifier: Apache-2.0
// This machine's ranks' stacks (collect_stacks.h) read beside the launcher's loop: start() forks
// a process (lib/common/process/answering_child.h) that runs the tools within `limit` and writes
// what they said to a pipe; the launcher polls that pipe with its other descriptors and takes the
// stacks from service() once the process ended. The process leads a process group of its own, so the tools it runs end
// with it: at `limit` plus a second it is killed, group and all, and every rank is reported without a stack. The
// launcher's signals do not reach it (it unblocks them, and dies with the launcher). Single-threaded; the caller must
// be too (it forks).
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/common/process/answering_child.h"
#include "lib/launch/stacks/collect_stacks.h"

namespace accel::launch::stacks {

// What the collecting process does first, within `limit`, beside the stacks: more of each rank's
// record (the flight records of Python ranks: supervise/rank_stacks.h), by rank.
struct CollectBefore {
  std::function<std::map<int, std::string>()> run;  // rank -> RankStack::flight
  std::chrono::milliseconds limit{0};
};

class StackCollector {
 public:
  using Clock = std::chrono::steady_clock;

  StackCollector() = default;
  ~StackCollector();  // a collection still running is killed
  StackCollector(const StackCollector&) = delete;
  StackCollector& operator=(const StackCollector&) = delete;

  // Starts reading `ranks`' stacks with the tools `env` finds. When the process cannot be made,
  // the result is ready at once: every rank without a stack, saying why.
  void start(const std::vector<RunningRank>& ranks, const std::map<std::string, std::string>& env,
             std::chrono::milliseconds limit, CollectBefore before = {});
  bool running() const { return child_.running() || ready_.has_value(); }
  pid_t pid() const { return child_.pid(); }  // the collecting process while it runs, else 0

  // Its pipe beside the caller's descriptors; lowers `timeout_ms` to when it is given up on.
  void addPollFds(std::vector<pollfd>& fds, int& timeout_ms) const;
  // After poll (`fds` the whole array): the stacks once the collection is over, else nullopt.
  std::optional<std::vector<RankStack>> service(const std::vector<pollfd>& fds);

 private:
  std::vector<RankStack> finish(const std::string& problem);

  std::vector<RunningRank> ranks_;
  process::AnsweringChild child_;  // in a process group of its own: stopping it ends the tools with it
  std::chrono::milliseconds limit_{0};
  std::optional<std::vector<RankStack>> ready_;
};

// The wire between the collecting process and the launcher, and between the launcher and `accel
// stacks`: one JSON object, and back; nullopt when `text` is not that.
std::string encodeStacks(const GatheredStacks& stacks);
std::optional<GatheredStacks> decodeStacks(const std::string& text);

}  // namespace accel::launch::stacks
