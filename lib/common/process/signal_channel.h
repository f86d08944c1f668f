// SPDX-License-Identifier: Apache-2.0
// The launcher's signals as a file descriptor: SIGCHLD, SIGCONT, the signals that stop a job
// (SIGINT, SIGTERM, SIGHUP and SIGQUIT: torchrun's set, launch_env::kSignalsToHandle) and the
// ones only passed on to the workers (SIGUSR1, SIGUSR2: SLURM's `sbatch --signal=USR1@60`
// warning before a time limit or preemption, which a worker turns into a last checkpoint) are
// blocked and read from a signalfd, so the supervisor's poll loop sees worker exits, interrupts
// and its own continuation after a stop among its pipes, never in a handler. SIGPIPE is ignored
// meanwhile (a closed console must not kill the launcher). SIGTSTP (Ctrl-Z: the supervisor stops
// the whole job, then the launcher itself, stopLikeCtrlZ) and SIGWINCH (the terminal was resized)
// are read there too. The destructor restores the signal mask and every disposition it changed.
//
// Dispositions inherited from whoever started the launcher:
//   - SIGINT, SIGTERM, SIGQUIT are acted on even when ignored on entry (a shell ignores SIGINT
//     and SIGQUIT for a command started with `&`, an ignore nobody asked for); they are reset to
//     the default, which the workers then inherit too (worker_process.h resets them again);
//   - SIGTSTP ignored on entry (whoever started the launcher wants no Ctrl-Z) is left so;
//   - SIGHUP, SIGUSR1 and SIGUSR2 ignored on entry are honoured: left ignored, never read here,
//     never forwarded, and the workers inherit the ignore. No shell ignores them by itself, so
//     an ignore is someone's explicit choice for the whole job (`nohup accel launch …`,
//     `trap '' USR1`). Not ignored, they have the default disposition in the launcher (exec
//     resets handlers) and so in the workers, once these unblock them.
#pragma once

#include <signal.h>

#include <string>

namespace accel::process {

class SignalChannel {
 public:
  SignalChannel();  // throws Error when signalfd fails
  ~SignalChannel();
  SignalChannel(const SignalChannel&) = delete;
  SignalChannel& operator=(const SignalChannel&) = delete;
  int fd() const { return fd_; }

 private:
  sigset_t set_, old_;
  int fd_ = -1;
  struct sigaction old_pipe_ {
  }, old_int_{}, old_term_{}, old_quit_{};
};

// SIGUSR1 and SIGUSR2: passed on to every running worker; they never stop the job nor change
// its exit code.
inline bool isPassedOn(int signal) { return signal == SIGUSR1 || signal == SIGUSR2; }

// Reads the signalfd when poll says it is readable: the first signal that stops a job, or 0.
// Used while no worker runs yet: SIGCHLD, SIGCONT and SIGWINCH are read and dropped, and so are
// SIGUSR1 and SIGUSR2 (no worker has a handler for them yet; kept for later, they would kill a
// worker that has not installed its handler); SIGTSTP stops the launcher (stopLikeCtrlZ).
int readInterrupt(int signal_fd, short revents);

// Stops this process as Ctrl-Z does (SIGTSTP's default action, so the shell reports a stopped
// job); returns once it is continued (`fg`, `bg`, SIGCONT).
void stopLikeCtrlZ();

}  // namespace accel::process
