// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/signal_channel.h"

#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "lib/common/error.h"

namespace accel {

SignalChannel::SignalChannel() {
  sigemptyset(&set_);
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&set_, s);
  ::sigprocmask(SIG_BLOCK, &set_, &old_);
  fd_ = ::signalfd(-1, &set_, SFD_CLOEXEC | SFD_NONBLOCK);
  if (fd_ < 0) {
    const int error = errno;
    ::sigprocmask(SIG_SETMASK, &old_, nullptr);
    throw Error(fmt::format("signalfd failed: {}", ::strerror(error)));
  }
  old_pipe_ = ::signal(SIGPIPE, SIG_IGN);
}

SignalChannel::~SignalChannel() {
  ::close(fd_);
  ::sigprocmask(SIG_SETMASK, &old_, nullptr);
  ::signal(SIGPIPE, old_pipe_);
}

}  // namespace accel
