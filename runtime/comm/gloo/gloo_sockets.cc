// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/gloo/gloo_sockets.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include <gloo/context.h>
#include <gloo/transport/pair.h>
#include <gloo/transport/tcp/address.h>

#include "lib/common/socket.h"
#include "lib/common/strings.h"

namespace accel::comm::gloo {

namespace {

#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_ignore_thread_begin();
extern "C" void __tsan_ignore_thread_end();
#endif

// The scan below reads descriptors other threads may be closing meanwhile: a descriptor gone is
// skipped, and one reused by another socket is caught by checking the duplicate, which cannot
// change. ThreadSanitizer would report the reads of other threads' descriptors as races.
struct ScanningOthersDescriptors {
#if defined(__SANITIZE_THREAD__)
  ScanningOthersDescriptors() { __tsan_ignore_thread_begin(); }
  ~ScanningOthersDescriptors() { __tsan_ignore_thread_end(); }
#endif
};

// The local endpoint of a connected socket, or "".
std::string connectedEndpoint(int fd) {
  sockaddr_storage addr{}, peer{};
  socklen_t len = sizeof addr, peer_len = sizeof peer;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "";
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) return "";  // listening: not ours
  return net::endpointText(&addr);
}

// Duplicates (close-on-exec) every connected socket of this process whose local endpoint is one
// of `locals` (net::endpointText's form). Call it while no other thread closes descriptors of
// those sockets (it reads every descriptor of the process); the caller closes the duplicates.
std::vector<int> dupSocketsAt(const std::vector<std::string>& locals) {
  std::vector<int> out;
  auto wanted = [&](int fd) { return std::find(locals.begin(), locals.end(), connectedEndpoint(fd)) != locals.end(); };
  [[maybe_unused]] ScanningOthersDescriptors scanning;
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return out;
  while (dirent* entry = ::readdir(dir)) {
    const auto fd = parseInt(entry->d_name);
    struct stat st {};
    if (!fd || *fd == ::dirfd(dir) || ::fstat(static_cast<int>(*fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    if (!wanted(static_cast<int>(*fd))) continue;
    const int copy = ::fcntl(static_cast<int>(*fd), F_DUPFD_CLOEXEC, 0);
    if (copy < 0) continue;
    if (wanted(copy)) {
      out.push_back(copy);
    } else {
      ::close(copy);  // the descriptor was reused meanwhile by another socket
    }
  }
  ::closedir(dir);
  return out;
}

}  // namespace

void shutdownSockets(const std::vector<int>& fds) {
  for (int fd : fds) ::shutdown(fd, SHUT_RDWR);
}

// Gloo's sockets, duplicated once they are connected (before any operation, so no descriptor
// is closed meanwhile): Pair::close() fails only the peers' pending operations, this rank's own
// pending receive waits out its timeout, and Gloo keeps the descriptors to itself. A shutdown()
// of the duplicates instead makes the pairs' I/O thread read end-of-file on both sides, which
// fails every pending operation at once. Shutting down the sockets this rank accepted reaches
// every connection once each rank that learns the verdict does the same.
std::vector<int> glooSockets(::gloo::Context& ctx) {
  std::vector<std::string> mine;
  for (int r = 0; r < ctx.size; ++r) {
    if (r == ctx.rank) continue;
    try {
      if (const auto& pair = ctx.getPair(r)) {
        if (const auto* address = dynamic_cast<const ::gloo::transport::tcp::Address*>(&pair->address())) {
          mine.push_back(net::endpointText(&address->getSockaddr()));
        }
      }
    } catch (...) {
      // Never connected: nothing to end.
    }
  }
  return dupSocketsAt(mine);
}

namespace {

// Runs one Gloo collective whose options `o` the caller declared before this call, so they
// outlive it. Why: after an error Gloo's I/O thread may still signal the failed operation's
// UnboundBuffers (once from each pair that had something pending on them) while this thread is
// already unwinding. It touches a buffer only while holding that pair's mutex, and Pair::close()
// takes the same mutex: closing every pair before `o` dies orders the I/O thread's last touch
// before the buffers' destruction, and takes the pairs off the event loop, so nothing is written
// into the caller's memory after its Work has failed. Gloo's own guard (a spin on
// weak_ptr::expired(), a relaxed load) orders nothing, which is what ThreadSanitizer reported.
// The group is broken after a failure anyway; closed pairs also fail the peers' pending
// operations at once instead of at their timeout.
void closePairs(::gloo::Context& ctx) {
  for (int r = 0; r < ctx.size; ++r) {
    if (r == ctx.rank) continue;
    try {
      if (auto& pair = ctx.getPair(r)) pair->close();
    } catch (...) {
      // A pair that cannot be closed is one Gloo never connected: nothing to order against.
    }
  }
}

}  // namespace

// `sockets`: this group's duplicates of Gloo's sockets (GlooBackend::sockets_). While they exist
// Gloo's close() no longer ends a connection, so they are shut down with the pairs.
void runGuarded(::gloo::Context& ctx, const std::vector<int>& sockets, FunctionRef<void()> run) {
  try {
    run();
  } catch (...) {
    closePairs(ctx);
    shutdownSockets(sockets);
    throw;
  }
}

}  // namespace accel::comm::gloo
