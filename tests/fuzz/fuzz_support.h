// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the fuzz targets in tests/fuzz (header-only, no libFuzzer dependency, so
// the targets also build with g++ into the replay tests).
//   FUZZ_CHECK(condition, message): a broken property aborts, which libFuzzer reports as a crash
//   and the replay driver as a failed test, with the message and the input's size on stderr.
//   splitRecords(): an input cut at NUL bytes, how the targets that take several strings
//   (options, environment entries, config text) read them.
//   connectLoopback(): a client socket to a server the target runs on 127.0.0.1.
#pragma once

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace accel::fuzz {

[[noreturn]] inline void fail(const char* condition, const std::string& message, const char* file, int line) {
  std::fprintf(stderr, "fuzz property failed at %s:%d: %s\n  %s\n", file, line, condition, message.c_str());
  std::abort();
}

// An unconditional failure: a call the compiler knows does not return (a FUZZ_CHECK(false) in a
// catch block still leaves "control reaches end of non-void function" at -O0).
#define FUZZ_FAIL(message) ::accel::fuzz::fail("unreachable", (message), __FILE__, __LINE__)

#define FUZZ_CHECK(condition, message)                                                \
  do {                                                                                \
    if (!(condition)) ::accel::fuzz::fail(#condition, (message), __FILE__, __LINE__); \
  } while (0)

inline std::string_view bytes(const uint8_t* data, size_t size) { return {reinterpret_cast<const char*>(data), size}; }

// "a\0b\0\0c" -> {"a", "b", "", "c"}. Always at least one record.
inline std::vector<std::string> splitRecords(std::string_view input) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t nul = input.find('\0', start);
    out.emplace_back(input.substr(start, nul == std::string_view::npos ? input.npos : nul - start));
    if (nul == std::string_view::npos) return out;
    start = nul + 1;
  }
}

// A connected, blocking TCP socket to 127.0.0.1:port; a refused connection fails the input.
inline int connectLoopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  FUZZ_CHECK(fd >= 0, "socket()");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return fd;
  int error = errno;
  if (error == EINTR) {  // libFuzzer's SIGALRM (its -timeout watchdog): the connection goes on
    pollfd p{fd, POLLOUT, 0};
    while (::poll(&p, 1, 30000) < 0 && errno == EINTR) {
    }
    socklen_t len = sizeof error;
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0) error = errno;
  }
  FUZZ_CHECK(error == 0, std::string("the server does not accept: ") + std::strerror(error));
  return fd;
}

// Whether `fd` becomes readable within `ms`, through libFuzzer's SIGALRM (its -timeout watchdog
// interrupts a poll with EINTR; the wait goes on for what is left of `ms`).
inline bool readableWithin(int fd, int ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    const int n = ::poll(&p, 1, static_cast<int>(std::max<long long>(0, left.count())));
    if (n >= 0 || errno != EINTR) return n > 0;
  }
}

}  // namespace accel::fuzz
