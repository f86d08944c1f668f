// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/console/worker_terminal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "lib/common/error.h"

namespace accel::launch::console {

namespace {

Error failed(const char* call) {
  return Error(fmt::format("cannot open a pseudo-terminal for a worker: {} failed: {}", call, ::strerror(errno)),
               "raise the system's pty limit (/proc/sys/kernel/pty/max), or run with --pty off (ACCEL_PTY=off)");
}

}  // namespace

Pty openPty(int columns, int rows) {
  Pty pty;
  pty.master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (pty.master < 0) throw failed("posix_openpt");
  char name[128];
  if (::grantpt(pty.master) != 0 || ::unlockpt(pty.master) != 0 || ::ptsname_r(pty.master, name, sizeof name) != 0 ||
      (pty.slave = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
    Error e = failed("opening its slave side");
    ::close(pty.master);
    throw e;
  }
  termios modes{};
  if (::tcgetattr(pty.slave, &modes) == 0) {
    modes.c_oflag &= ~static_cast<tcflag_t>(ONLCR);
    ::tcsetattr(pty.slave, TCSANOW, &modes);
  }
  setPtySize(pty.master, columns, rows);
  ::fcntl(pty.master, F_SETFL, O_NONBLOCK);
  return pty;
}

void setPtySize(int master, int columns, int rows) {
  winsize size{};
  size.ws_col = static_cast<unsigned short>(columns);
  size.ws_row = static_cast<unsigned short>(rows);
  ::ioctl(master, TIOCSWINSZ, &size);
}

}  // namespace accel::launch::console
