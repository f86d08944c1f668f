// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/job_control.h"

#include <signal.h>

#include "lib/common/process/signal_channel.h"
#include "lib/launch/supervise/worker_output.h"

namespace accel::launch::supervise {

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

void stopJobLikeCtrlZ(const std::vector<WorkerProcess>& workers, job::JobLink& link, console::Console& console,
                      console::TerminalInput& input) {
  holdWorkers(workers, true);
  link.hold(true);
  console.flush(console::Console::Clock::now(), true);
  console.erase();
  input.release();
  process::stopLikeCtrlZ();  // the terminal is taken again at the next poll, if it is still ours
  link.hold(false);
  holdWorkers(workers, false);
  followResize(workers, console);  // the terminal may have changed while the job was stopped
  console.flush(console::Console::Clock::now(), true);
}

void followResize(const std::vector<WorkerProcess>& workers, console::Console& console) {
  if (console.readSize()) resizeTerminals(workers, console);
}

}  // namespace accel::launch::supervise
