// SPDX-License-Identifier: Apache-2.0
// Where a job's events go (event.h): the run's events.jsonl in --log_dir, the file or descriptor
// of --event_log, and with torchrun's --event-log-handler console torchrun's lines on stderr. On
// several machines machine 0's log holds every machine's events (the others send theirs over the
// job channel: job_link.h sendEvent); each other machine's own targets hold its own.
// Each line goes out in one write() to a descriptor opened O_APPEND, so lines of launchers that
// share a file never mix. A target that cannot be written (a full disk) is said once and dropped;
// a pipe whose reader stalls loses the lines it cannot take then, said once a stall; the job goes
// on. Single-threaded.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "lib/launch/plan/launch_plan.h"
#include "lib/launch/watch/event.h"

namespace accel::launch::watch {

inline constexpr const char* kEventsFile = "events.jsonl";

class EventLog {
 public:
  // `say` takes the lines the log has for the user: its warnings and torchrun's console lines.
  using Say = std::function<void(const std::string& line, bool ours)>;
  explicit EventLog(Say say) : say_(std::move(say)) {}
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  // Opens the plan's targets, and `run_dir`/events.jsonl where there is a run folder ("" for
  // none). A target that cannot be opened is said, and the others kept.
  void open(const plan::LaunchPlan& plan, const std::string& run_dir);
  bool writes() const { return !targets_.empty(); }
  // The first file it writes ("" for none: no file, or a descriptor only).
  std::string firstFile() const {
    for (const auto& t : targets_) {
      if (t.owned) return t.name;
    }
    return "";
  }
  // Writes `e` to every target, and torchrun's line for it to the console where asked.
  void record(const Event& e, const TorchrunContext& context);
  // Another machine's event, as its launcher wrote it: kept only where it is one JSON object.
  void recordLine(const std::string& line);

 private:
  struct Target {
    int fd = -1;
    bool owned = false;
    std::string name;      // for the warning: the file's path, or "fd:N"
    bool stalled = false;  // a pipe that took nothing last time (said once a stall)
  };
  void write(const std::string& line);

  Say say_;
  std::vector<Target> targets_;
  bool console_ = false;
};

}  // namespace accel::launch::watch
