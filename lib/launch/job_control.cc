// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/job_control.h"

#include <signal.h>

#include "lib/launch/signal_channel.h"
#include "lib/launch/worker_output.h"

namespace accel {

void passOn(const std::vector<WorkerProcess>& workers, int signal) {
  for (const auto& w : workers) {
    if (w.running) ::kill(w.pid, signal);
  }
}

void holdWorkers(const std::vector<WorkerProcess>& workers, bool stopped) {
  for (const auto& w : workers) {
    if (w.running) signalGroup(w, stopped ? SIGSTOP : SIGCONT);
  }
}

void stopJobLikeCtrlZ(const std::vector<WorkerProcess>& workers, JobLink& link, Console& console,
                      TerminalInput& input) {
  holdWorkers(workers, true);
  link.hold(true);
  console.flush(Console::Clock::now(), true);
  console.erase();
  input.release();
  stopLikeCtrlZ();  // the terminal is taken again at the next poll, if it is still ours
  link.hold(false);
  holdWorkers(workers, false);
  followResize(workers, console);  // the terminal may have changed while the job was stopped
  console.flush(Console::Clock::now(), true);
}

void followResize(const std::vector<WorkerProcess>& workers, Console& console) {
  if (console.readSize()) resizeTerminals(workers, console);
}

}  // namespace accel
