// SPDX-License-Identifier: Apache-2.0
// Job control for the supervisor: Ctrl-Z stops the whole job and `fg` resumes it, on every
// machine; a resized terminal reaches the workers' pseudo-terminals; SIGUSR1 and SIGUSR2 reach
// the workers. Workers are stopped with
// SIGSTOP to their process groups (SIGTSTP could be caught or, in a group with no parent in the
// session, discarded), so each one is in state T until continued. The collectives' timeouts and
// the job channel's heartbeats do not count a stop (running_deadline.h, job_link.h hold()), so
// a job stopped for longer than both resumes unharmed. Single-threaded, as the supervisor.
#pragma once

#include <vector>

#include "lib/launch/console/console.h"
#include "lib/launch/console/terminal_input.h"
#include "lib/launch/job/job_link.h"
#include "lib/launch/supervise/worker_process.h"

namespace accel::launch::supervise {

// SIGUSR1 or SIGUSR2 to each running worker's own process, not its group: a user's handler
// (the last checkpoint) is in the worker's main process; its children (DataLoader workers) keep
// the default, which kills them.
void passOn(const std::vector<WorkerProcess>& workers, int signal);

// SIGSTOP (`stopped`) or SIGCONT to every running worker's process group.
void holdWorkers(const std::vector<WorkerProcess>& workers, bool stopped);

// Ctrl-Z on this machine: stops its workers, tells the other machines (which stop theirs),
// erases the live lines and gives the terminal its modes back, then stops the launcher; once
// the launcher is continued (`fg`, `bg`), undoes each step in reverse.
void stopJobLikeCtrlZ(const std::vector<WorkerProcess>& workers, job::JobLink& link, console::Console& console,
                      console::TerminalInput& input);

// SIGWINCH: the terminal's new size to every worker pseudo-terminal.
void followResize(const std::vector<WorkerProcess>& workers, console::Console& console);

}  // namespace accel::launch::supervise
