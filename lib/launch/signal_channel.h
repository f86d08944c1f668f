// SPDX-License-Identifier: Apache-2.0
// The launcher's signals as a file descriptor: SIGCHLD, SIGINT, SIGTERM, SIGHUP and SIGQUIT (torchrun's
// set, launch_env::kSignalsToHandle) are blocked
// and read from a signalfd, so the supervisor's poll loop sees worker exits and interrupts
// among its pipes, never in a handler. SIGPIPE is ignored meanwhile (a closed console must not
// kill the launcher). The destructor restores the signal mask and SIGPIPE's disposition.
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

 private:
  sigset_t set_, old_;
  int fd_ = -1;
  sighandler_t old_pipe_ = SIG_DFL;
};

}  // namespace accel
