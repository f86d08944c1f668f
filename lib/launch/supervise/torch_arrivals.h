// SPDX-License-Identifier: Apache-2.0
// Python ranks' arrivals at collectives (flight/arrivals.h) for the straggler watch, from torch's
// flight recorder through accel's hook (flight/torch_records.h: torch's worker server answers
// fr_trace_json without the GIL). Each look is a process of its own
// (lib/common/process/answering_child.h), which asks every rank within kLimit and writes group 0's calls of each on a
// pipe that the launcher polls beside its other descriptors: the launcher's loop never waits on a
// worker, and a rank that does not answer costs the look nothing but its own calls.
// Single-threaded; the caller must be too (it forks).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lib/common/process/answering_child.h"
#include "lib/launch/flight/torch_records.h"

namespace accel::launch::supervise {

struct TorchCalls {
  int rank = 0;
  long long pid = 0;
  std::vector<std::pair<uint64_t, int64_t>> calls;  // group 0's: sequence number, this machine's clock
};

class TorchArrivals {
 public:
  static constexpr std::chrono::milliseconds kLimit{2000};

  bool running() const { return child_.running(); }
  pid_t pid() const { return child_.pid(); }  // a look's process while it runs, else 0
  // Starts a look at `ranks` (none: no look). Returns why it could not start ("" when it did or
  // had nothing to do): the look is skipped, and the next one tries again.
  std::string start(const std::vector<flight::TorchRank>& ranks);
  void addPollFds(std::vector<pollfd>& fds, int& timeout_ms) const { child_.addPollFds(fds, timeout_ms); }
  // After poll: every rank's calls once the look ended (ranks that gave none have none).
  std::optional<std::vector<TorchCalls>> service(const std::vector<pollfd>& fds);
  void stop() { child_.stop(); }

 private:
  process::AnsweringChild child_;
};

// The look's text: "rank pid count" then a "seq ns" line per call, for each rank; and back
// (nullopt for text that is not that).
std::string encodeTorchCalls(const std::vector<TorchCalls>& ranks);
std::optional<std::vector<TorchCalls>> decodeTorchCalls(const std::string& text);

}  // namespace accel::launch::supervise
