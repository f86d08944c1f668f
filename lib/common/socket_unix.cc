// SPDX-License-Identifier: Apache-2.0
// socket.h's Unix stream sockets.
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "lib/common/socket.h"
#include "lib/common/strings.h"

namespace accel::net {

namespace {

// The address of `name`, its length in `size`; false when the name does not fit.
bool unixAddress(const std::string& name, sockaddr_un& addr, socklen_t& size) {
  addr = {};
  addr.sun_family = AF_UNIX;
  if (name.empty() || name.size() >= sizeof addr.sun_path) return false;
  std::memcpy(addr.sun_path, name.data(), name.size());
  if (name[0] == '@') addr.sun_path[0] = '\0';
  size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size() + (name[0] == '@' ? 0 : 1));
  return true;
}

}  // namespace

int listenUnix(const std::string& name, std::string& error) {
  sockaddr_un addr;
  socklen_t size = 0;
  if (!unixAddress(name, addr, size)) return error = "the socket name is empty or too long", -1;
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return error = toLower(std::strerror(errno)), -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), size) != 0 || ::listen(fd, 64) != 0) {
    error = toLower(std::strerror(errno));
    ::close(fd);
    return -1;
  }
  return fd;
}

int connectUnix(const std::string& name, std::chrono::steady_clock::time_point deadline, std::string& error) {
  sockaddr_un addr;
  socklen_t size = 0;
  if (!unixAddress(name, addr, size)) return error = "the socket name is empty or too long", -1;
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return error = toLower(std::strerror(errno)), -1;
  // A full backlog refuses a Unix connect outright (EAGAIN, nothing pending): tried again until
  // the deadline.
  while (::connect(fd, reinterpret_cast<sockaddr*>(&addr), size) != 0) {
    if ((errno != EAGAIN && errno != EINTR) || remainingMs(deadline) == 0) {
      error = toLower(std::strerror(errno));
      ::close(fd);
      return -1;
    }
    ::poll(nullptr, 0, std::min(5, remainingMs(deadline)));
  }
  return fd;
}

}  // namespace accel::net
