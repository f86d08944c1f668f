// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/collective_now.h"

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

#include "lib/launch/launch_env.h"
#include "runtime/comm/launcher_memory.h"

extern "C" {
__attribute__((used, visibility("default"))) char accel_collective_now[256] = "";
}

namespace accel {

namespace {
std::mutex& noteLock() {
  static std::mutex lock;
  return lock;
}

// This rank's slot on the launcher's progress board (launch_env.h kProgressFd); nullptr without one.
std::atomic<uint64_t>* mapProgressSlot() {
  const long long local = launcherSlot();
  if (local < 0) return nullptr;
  const size_t offset = static_cast<size_t>(local) * launch_env::kProgressSlotBytes;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  void* map = mapLauncherMemory(launch_env::kProgressFd, "accel-progress", offset / page * page,
                                offset % page + launch_env::kProgressSlotBytes);
  if (!map) return nullptr;
  return reinterpret_cast<std::atomic<uint64_t>*>(static_cast<unsigned char*>(map) + offset % page);
}

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
