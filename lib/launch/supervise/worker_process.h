// SPDX-License-Identifier: Apache-2.0
// One worker: a child process in its own process group (so a signal reaches everything it
// started), that dies with the launcher (PR_SET_PDEATHSIG), its stdout and stderr each through a
// pipe or, where the user sees that stream on a terminal, a pseudo-terminal
// (console/worker_terminal.h); stdin from /dev/null, except for the one rank that takes the
// user's input (console/terminal_input.h): its stdin is its stdout's pseudo-terminal. Owned by
// the supervisor's single thread.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "lib/launch/console/output_stream.h"
#include "lib/launch/plan/launch_plan.h"

namespace accel::launch::supervise {

struct WorkerProcess {
  const plan::WorkerSpec* spec = nullptr;
  pid_t pid = -1;   // also the process group id
  int out_fd = -1;  // read ends (a pipe's, or a pseudo-terminal's master); -1 once closed
  int err_fd = -1;
  bool out_pty = false, err_pty = false;
  bool one_pty = false;      // stdout and stderr share out_fd's pseudo-terminal; err_fd is unused
  bool takes_input = false;  // the user's input goes to out_fd (a pseudo-terminal)
  std::unique_ptr<console::OutputStream> out;
  std::unique_ptr<console::OutputStream> err;
  bool running = false;
  int status = 0;                // waitpid status once exited
  double exited_at = 0;          // seconds since the launch started
  bool stopped_by_us = false;    // we signalled it before it exited
  bool sigkilled_by_us = false;  // ... with SIGKILL
  std::string error_file;        // its TORCHELASTIC_ERROR_FILE this round ("" for none)

  // 0 for a clean exit, the exit code, or 128 + signal number.
  int exitCode() const;
  // "exited with code 3", "was killed by signal SIGKILL".
  std::string describeExit() const;
  // What it is doing now, as the kernel says ("alive but stopped …"), or how it exited.
  std::string describeNow() const;
  // It died of a SIGKILL the launcher did not send (the OOM killer, `kill -9`).
  bool killedFromOutside() const;
};

// "rank 3", or the label of a process that runs several ranks (mpirun).
std::string workerName(const plan::WorkerSpec& spec);

// How a worker's streams are connected: pseudo-terminals of `columns` x `rows` where asked
// (`input`: stdin too, on stdout's), pipes otherwise; `one_pty`: both streams on stdout's one
// pseudo-terminal, as on a terminal (two could not keep the order of their lines between them).
struct WorkerIo {
  bool out_pty = false, err_pty = false, one_pty = false, input = false;
  int columns = 80, rows = 24;
  std::vector<int> inherit;  // descriptors the worker keeps (progress_board.h, flight_board.h)
};

// Starts `w.spec` (lib/common/process/child.h) with `env` over the launcher's environment, less
// `unset`, its streams as `io` says, in its own process group, dying with the launcher. The
// caller has SignalChannel's signals blocked; the child's set-up unblocks them. Throws Error
// when fork or pipe fails; an exec failure shows as exit code 127 with a message.
void spawnWorker(WorkerProcess& w, const plan::Env& env, const std::vector<std::string>& unset,
                 const WorkerIo& io = {});

// Sends `signal` to the worker's whole process group (ignores groups that are gone).
void signalGroup(const WorkerProcess& w, int signal);

}  // namespace accel::launch::supervise
