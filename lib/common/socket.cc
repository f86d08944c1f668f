// SPDX-License-Identifier: Apache-2.0
#include "lib/common/socket.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "lib/common/strings.h"

namespace accel::net {

namespace {

using Clock = std::chrono::steady_clock;

std::string errnoText(int e) { return toLower(std::strerror(e)); }

// getaddrinfo for a TCP host:port; nullptr with `error` set on failure. Free with freeaddrinfo.
addrinfo* resolve(const std::string& host, int port, bool passive, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), std::to_string(port).c_str(), &hints, &found)) {
    error = "cannot resolve " + (host.empty() ? std::string("*") : host) + ": " + toLower(::gai_strerror(rc));
    return nullptr;
  }
  return found;
}

// Waits for a non-blocking connect to finish; false with errno set when it failed or timed out.
bool finishConnect(int fd, Clock::time_point deadline) {
  pollfd p{fd, POLLOUT, 0};
  int rc;
  while ((rc = ::poll(&p, 1, remainingMs(deadline))) < 0 && errno == EINTR) {
  }
  if (rc == 0) errno = ETIMEDOUT;
  if (rc <= 0) return false;
  int err = 0;
  socklen_t len = sizeof err;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  errno = err;
  return err == 0;
}

// TCP's simultaneous open lets a connect to a free local port meet itself.
bool connectedToItself(int fd) {
  sockaddr_storage a{}, b{};
  socklen_t la = sizeof a, lb = sizeof b;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &la);
  ::getpeername(fd, reinterpret_cast<sockaddr*>(&b), &lb);
  return la == lb && std::memcmp(&a, &b, la) == 0;
}

}  // namespace

int listenTcp(const std::string& host, int port, std::string& error, int& error_number) {
  error_number = EADDRNOTAVAIL;
  addrinfo* found = resolve(host, port, true, error);
  if (!found) return -1;
  int listening = -1;
  for (addrinfo* ai = found; ai && listening < 0; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      error_number = errno;
      continue;
    }
    int one = 1, zero = 0;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ai->ai_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      listening = fd;
    } else {
      error_number = errno;
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  if (listening < 0) error = errnoText(error_number);
  return listening;
}

int probePort(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // as listenTcp
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const int bound = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 ? boundPort(fd) : -1;
  ::close(fd);
  return bound;
}

int boundPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

int connectTcp(const std::string& host, int port, std::chrono::steady_clock::time_point deadline, std::string& error) {
  addrinfo* found = resolve(host, port, false, error);
  if (!found) return -1;
  int fd = -1;
  for (addrinfo* ai = found; ai && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    bool ok = ::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 || (errno == EINPROGRESS && finishConnect(fd, deadline));
    if (ok && connectedToItself(fd)) {
      errno = ECONNREFUSED;
      ok = false;
    }
    if (!ok) {
      error = errnoText(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd >= 0) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  return fd;
}

int remainingMs(std::chrono::steady_clock::time_point deadline) {
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(ms, 0, INT_MAX));
}

std::string readUntilClosed(int fd, std::chrono::steady_clock::time_point deadline) {
  std::string text;
  char buffer[65536];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, remainingMs(deadline)) <= 0) return text;
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return text;
    text.append(buffer, static_cast<size_t>(n));
  }
}

bool isLoopback(const std::string& host) { return host == "localhost" || startsWith(host, "127.") || host == "::1"; }

std::string localAddressTowards(const std::string& peer) {
  addrinfo hints{}, *result = nullptr;
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  if (::getaddrinfo(peer.c_str(), "9", &hints, &result) != 0 || !result) return "";
  std::string local;
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && ::connect(fd, result->ai_addr, result->ai_addrlen) == 0) {
    sockaddr_in me{};
    socklen_t len = sizeof me;
    char text[INET_ADDRSTRLEN] = {};
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&me), &len) == 0 &&
        ::inet_ntop(AF_INET, &me.sin_addr, text, sizeof text)) {
      local = text;
    }
  }
  if (fd >= 0) ::close(fd);
  ::freeaddrinfo(result);
  return local;
}

std::string interfaceOf(const std::string& address) {
  ifaddrs* all = nullptr;
  if (::getifaddrs(&all) != 0) return "";
  std::string name;
  for (ifaddrs* i = all; i && name.empty(); i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    auto* in = reinterpret_cast<sockaddr_in*>(i->ifa_addr);
    if (::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text) && address == text) name = i->ifa_name;
  }
  ::freeifaddrs(all);
  return name;
}

std::string resolveIPv4(const std::string& host) {
  addrinfo hints{}, *result = nullptr;
  hints.ai_family = AF_INET;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &result) != 0 || !result) return "";
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(result->ai_addr)->sin_addr, text, sizeof text);
  ::freeaddrinfo(result);
  return text;
}

Route routeTowards(const std::string& peer) {
  Route r;
  r.address = localAddressTowards(peer);
  if (!r.address.empty()) r.interface = interfaceOf(r.address);
  return r;
}

std::string peerAddress(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  char text[INET_ADDRSTRLEN] = {};
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 || addr.ss_family != AF_INET) return "?";
  ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&addr)->sin_addr, text, sizeof text);
  return text[0] ? text : "?";
}

std::vector<std::string> ownAddresses() {
  std::vector<std::string> out;
  ifaddrs* all = nullptr;
  if (::getifaddrs(&all) != 0) return out;
  for (ifaddrs* i = all; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
    if (!isLoopback(text)) out.push_back(std::string(i->ifa_name) + " " + text);
  }
  ::freeifaddrs(all);
  return out;
}

std::string endpointText(const void* sockaddr_storage_ptr) {
  const auto* addr = static_cast<const sockaddr_storage*>(sockaddr_storage_ptr);
  char text[INET6_ADDRSTRLEN] = {};
  if (addr->ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    return std::string(text) + ":" + std::to_string(ntohs(in->sin_port));
  }
  if (addr->ss_family == AF_INET6) {
    const auto* in = reinterpret_cast<const sockaddr_in6*>(addr);
    ::inet_ntop(AF_INET6, &in->sin6_addr, text, sizeof text);
    return "[" + std::string(text) + "]:" + std::to_string(ntohs(in->sin6_port));
  }
  return "";
}

}  // namespace accel::net
