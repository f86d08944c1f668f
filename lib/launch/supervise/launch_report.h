// SPDX-License-Identifier: Apache-2.0
// What the launcher says on stderr as "accel: …" lines: progress, and at the end of a round the
// job's first failure (machine, rank, pid where it is this machine's, exit, stderr tail) or why
// the launch ended (an interrupt, a lost machine). Where rounds can differ (restarts, several
// machines) every line carries "[round N]".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/launch/console/console.h"
#include "lib/launch/job/job_link.h"
#include "lib/launch/supervise/worker_process.h"

namespace accel::launch::supervise {

// A failed worker of this machine as every machine's summary names it: its exit, its last
// stderr lines, and the exception its @record error file holds.
job::WorkerFailure failureOf(const WorkerProcess& w, const plan::LaunchPlan& plan);
// The ranks this machine stopped, but `except`.
std::vector<std::string> stoppedRanks(const std::vector<WorkerProcess>& workers, const WorkerProcess* except);
// A line about the worker seen failing just before this machine's first failure (`consequence`,
// a peer broken by a SIGKILLed worker), or "".
std::string consequenceLine(const WorkerProcess* consequence);

class LaunchReport {
 public:
  // Its lines go through `console` (kept above the live lines of a terminal) when given.
  explicit LaunchReport(const plan::LaunchPlan& plan, console::Console* console = nullptr)
      : console_(console),
        machine_(plan.machine_rank),
        several_machines_(plan.num_machines > 1),
        one_console_(plan.one_console),
        rounds_(plan.max_restarts > 0 || plan.num_machines > 1) {}
  void setRound(int round, int restarts) {
    round_ = round;
    restarts_ = restarts;
  }
  void setMachine(int machine) { machine_ = machine; }  // given out at the join
  // Lines about every rank's stack, shown at the end of this round's failure summary.
  void setStacks(std::vector<std::string> lines) { stacks_ = std::move(lines); }
  void say(const std::string& line) const;
  // A line of the launcher's own as it is, without "accel: " (torchrun's event lines).
  void plain(const std::string& line) const { write(line); }

  // `consequence`: a line about the worker seen failing just before (this machine's failure
  // only), or "". `stopped`: the ranks this machine stopped. On a hostfile head's console, where
  // the failed worker's own launcher writes the summary, another machine's says only what it stopped.
  void failure(const std::optional<job::WorkerFailure>& failure, const std::string& consequence,
               const std::vector<std::string>& stopped) const;
  // The last words of a launch; returns its exit code.
  int end(const job::JobEvent& e, const std::string& consequence, const std::vector<std::string>& stopped) const;

 private:
  void write(std::string line) const;  // one line of ours on stderr
  void showStacks() const;
  console::Console* console_;
  int machine_;
  bool several_machines_, one_console_, rounds_;
  int round_ = 0;
  int restarts_ = 0;                         // failures restarted; the other rounds were changes of machines
  mutable std::vector<std::string> stacks_;  // shown once
};

}  // namespace accel::launch::supervise
