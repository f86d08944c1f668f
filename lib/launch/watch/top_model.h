// SPDX-License-Identifier: Apache-2.0
// What `accel top` shows, from the job's views (status_json.h) as they come, about once a
// second: every rank's row with its rates (collectives and progress-bar frames per second, CPU %)
// from the difference to the view before, the rate a progress bar prints itself ("12.3it/s"), and
// the job's throughput over time. Rows sort by a column; the JSON of `accel top --json` is made
// here too. Pure: no terminal, no clock of its own.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/launch/watch/status_json.h"

namespace accel::launch::watch {

struct TopRow {
  const RankStatus* rank = nullptr;
  const MachineStatus* machine = nullptr;
  std::string state{};            // running, exited 0, failed 3, stopped (by the launcher), SIGKILL
  double collectives_per_s = -1;  // -1: not known yet
  double frames_per_s = -1;
  std::string bar_rate{};  // what its progress bar says ("12.3it/s", "4.56s/it"), or ""
  double cpu_percent = -1;
};

enum class TopSort { Rank, Cpu, Memory, Quiet, Rate };
const char* sortName(TopSort sort);
TopSort nextSort(TopSort sort);

class TopModel {
 public:
  // A new view, taken `seconds` (a steady clock's) since some fixed start.
  void update(JobView view, double seconds);
  const JobView& view() const { return view_; }
  std::vector<TopRow> rows(TopSort sort) const;
  // The job's throughput, one value per view: the ranks' collectives per second summed, or where
  // none calls any, their progress bars' iterations per second; the last kHistory.
  static constexpr size_t kHistory = 120;
  const std::deque<double>& throughput() const { return throughput_; }
  const char* throughputUnit() const { return collectives_ ? "collectives/s" : "it/s"; }
  nlohmann::json json() const;  // `accel top --json`

 private:
  struct Sample {
    uint64_t collectives = 0, frames = 0;
    double cpu = 0;
    int pid = 0;
  };
  JobView view_;
  double at_ = 0;
  double since_last_ = 0;
  std::map<std::pair<int, int>, Sample> before_;  // (machine, rank) -> the view before's
  std::map<std::pair<int, int>, Sample> now_;
  std::deque<double> throughput_;
  bool collectives_ = false;
};

// What a progress bar's frame says of its rate: "12.3it/s" or "4.56s/it" (tqdm's words), or "".
std::string barRate(const std::string& frame);
// The iterations per second that rate means (0 for none).
double iterationsPerSecond(const std::string& bar_rate);

}  // namespace accel::launch::watch
