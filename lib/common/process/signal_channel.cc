// SPDX-License-Identifier: Apache-2.0
#include "lib/common/process/signal_channel.h"

#include <poll.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include <fmt/format.h>

#include "lib/common/error.h"

namespace accel::process {

namespace {

void setDisposition(int signal, sighandler_t handler, struct sigaction* old) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  ::sigaction(signal, &action, old);
}

bool ignoredOnEntry(int signal) {
  struct sigaction current {};
  ::sigaction(signal, nullptr, &current);
  return current.sa_handler == SIG_IGN;
}

}  // namespace

SignalChannel::SignalChannel() {
  sigemptyset(&set_);
  for (int s : {SIGCHLD, SIGCONT, SIGINT, SIGTERM, SIGQUIT, SIGWINCH}) sigaddset(&set_, s);
  for (int s : {SIGHUP, SIGUSR1, SIGUSR2, SIGTSTP}) {
    if (!ignoredOnEntry(s)) sigaddset(&set_, s);
  }
  ::sigprocmask(SIG_BLOCK, &set_, &old_);
  fd_ = ::signalfd(-1, &set_, SFD_CLOEXEC | SFD_NONBLOCK);
  if (fd_ < 0) {
    const int error = errno;
    ::sigprocmask(SIG_SETMASK, &old_, nullptr);
    throw Error(fmt::format("signalfd failed: {}", ::strerror(error)));
  }
  setDisposition(SIGINT, SIG_DFL, &old_int_);
  setDisposition(SIGTERM, SIG_DFL, &old_term_);
  setDisposition(SIGQUIT, SIG_DFL, &old_quit_);
  setDisposition(SIGPIPE, SIG_IGN, &old_pipe_);
}

SignalChannel::~SignalChannel() {
  ::close(fd_);
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
  ::sigaction(SIGQUIT, &old_quit_, nullptr);
  ::sigprocmask(SIG_SETMASK, &old_, nullptr);
  ::sigaction(SIGPIPE, &old_pipe_, nullptr);
}

int readInterrupt(int signal_fd, short revents) {
  if (!(revents & POLLIN)) return 0;
  signalfd_siginfo info;
  int signal = 0;
  while (::read(signal_fd, &info, sizeof info) == sizeof info) {
    const int s = static_cast<int>(info.ssi_signo);
    if (s == SIGTSTP) stopLikeCtrlZ();  // no worker to stop yet
    if (s != SIGCHLD && s != SIGCONT && s != SIGWINCH && s != SIGTSTP && !isPassedOn(s) && !signal) signal = s;
  }
  return signal;
}

void stopLikeCtrlZ() {
  sigset_t tstp;
  sigemptyset(&tstp);
  sigaddset(&tstp, SIGTSTP);
  struct sigaction original {
  }, fallback{};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  ::sigaction(SIGTSTP, &fallback, &original);
  ::raise(SIGTSTP);                            // pending while blocked,
  ::sigprocmask(SIG_UNBLOCK, &tstp, nullptr);  // delivered here: the launcher stops
  ::sigprocmask(SIG_BLOCK, &tstp, nullptr);    // continued: back to the signalfd
  ::sigaction(SIGTSTP, &original, nullptr);
}

}  // namespace accel::process
