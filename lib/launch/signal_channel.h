// SPDX-License-Identifier: Apache-2.0
// The launcher's signals as a file descriptor: SIGCHLD, SIGCONT and the signals that stop a job
// (SIGINT, SIGTERM, SIGHUP and SIGQUIT: torchrun's set, launch_env::kSignalsToHandle) are blocked
// and read from a signalfd, so the supervisor's poll loop sees worker exits, interrupts and its
// own continuation after a stop among its pipes, never in a handler. SIGPIPE is ignored
// meanwhile (a closed console must not kill the launcher). The destructor restores the signal
// mask and every disposition it changed.
//
// Dispositions inherited from whoever started the launcher:
//   - SIGINT, SIGTERM, SIGQUIT are acted on even when ignored on entry (a shell ignores SIGINT
//     and SIGQUIT for a command started with `&`); they are reset to the default, which the
//     workers then inherit too (worker_process.h resets them again);
//   - SIGHUP ignored on entry (`nohup accel launch …`) is honoured: left ignored, never read
//     here, never forwarded, and the workers inherit the ignore as nohup means them to.
#pragma once

#include <signal.h>

namespace accel {

class SignalChannel {
 public:
  SignalChannel();  // throws Error when signalfd fails
  ~SignalChannel();
  SignalChannel(const SignalChannel&) = delete;
  SignalChannel& operator=(const SignalChannel&) = delete;
  int fd() const { return fd_; }
  bool hangupIgnored() const { return hangup_ignored_; }

 private:
  sigset_t set_, old_;
  int fd_ = -1;
  bool hangup_ignored_ = false;
  struct sigaction old_pipe_ {
  }, old_int_{}, old_term_{}, old_quit_{};
};

// Reads the signalfd when poll says it is readable: the first signal that stops a job, or 0.
// SIGCHLD and SIGCONT are read and dropped. Used while no worker runs yet.
int readInterrupt(int signal_fd, short revents);

}  // namespace accel
