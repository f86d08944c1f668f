// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/collective_now.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"

extern "C" {
__attribute__((used, visibility("default"))) char accel_collective_now[256] = "";
}

namespace accel {

namespace {
std::mutex& noteLock() {
  static std::mutex lock;
  return lock;
}

// Whether descriptor `fd` is the launcher's board: a program this one started inherits the
// variable but not the descriptor, whose number may then be another file's.
bool isProgressBoard(int fd) {
  char target[64] = {};
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
  return n > 0 && std::string(target, static_cast<size_t>(n)).rfind("/memfd:accel-progress", 0) == 0;
}

// This rank's count on the launcher's progress board (launch_env.h kProgressFd), mapped once and
// its descriptor closed, so that programs this one starts do not hold it; nullptr without one.
std::atomic<uint64_t>* mapProgressSlot() {
  const char* fd_text = std::getenv(launch_env::kProgressFd);
  const char* local_text = std::getenv(launch_env::kLocalRank);  // none: a launch of one process
  if (!fd_text) return nullptr;
  const long long fd = parseInt(fd_text).value_or(-1), local = local_text ? parseInt(local_text).value_or(-1) : 0;
  if (fd < 0 || fd > (1 << 20) || local < 0 || local > (1 << 20) || !isProgressBoard(static_cast<int>(fd))) {
    return nullptr;
  }
  const size_t end = (static_cast<size_t>(local) + 1) * launch_env::kProgressSlotBytes;
  struct stat st {};
  void* map = MAP_FAILED;
  if (::fstat(static_cast<int>(fd), &st) == 0 && static_cast<size_t>(st.st_size) >= end) {
    map = ::mmap(nullptr, end, PROT_READ | PROT_WRITE, MAP_SHARED, static_cast<int>(fd), 0);
  }
  ::close(static_cast<int>(fd));
  if (map == MAP_FAILED) return nullptr;
  return reinterpret_cast<std::atomic<uint64_t>*>(static_cast<unsigned char*>(map) + end -
                                                  launch_env::kProgressSlotBytes);
}
}  // namespace

namespace {
std::atomic<uint64_t>* progressSlot() {
  static std::atomic<uint64_t>* const slot = mapProgressSlot();
  return slot;
}
}  // namespace

void noteCheckpointSaved(long long step) {
  if (std::atomic<uint64_t>* slot = progressSlot(); slot && step >= 0) {
    slot[1].store(static_cast<uint64_t>(step) + 1, std::memory_order_relaxed);
  }
}

void noteCollective(bool running, const std::string& numbered, const std::string& label) {
  std::atomic<uint64_t>* const progress = progressSlot();
  if (!running && progress) progress->fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> hold(noteLock());
  std::snprintf(accel_collective_now, sizeof accel_collective_now, "%s %s%s%s", running ? "in" : "after",
                numbered.c_str(), label.empty() ? "" : ", ", label.c_str());
}

}  // namespace accel
