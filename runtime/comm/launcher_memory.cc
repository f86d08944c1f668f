// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/launcher_memory.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"

namespace accel {

namespace {
constexpr long long kMaxNumber = 1 << 20;

bool isMemfd(int fd, const char* name) {
  char target[128] = {};
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
  return n > 0 && std::string(target, static_cast<size_t>(n)).rfind(std::string("/memfd:") + name, 0) == 0;
}
}  // namespace

long long launcherSlot() {
  const char* slot = std::getenv(launch_env::kLocalSlot);
  const char* text = slot ? slot : std::getenv(launch_env::kLocalRank);
  if (!text) return 0;
  const long long local = parseInt(text).value_or(-1);
  return local >= 0 && local <= kMaxNumber ? local : -1;
}

void* mapLauncherMemory(const char* fd_variable, const char* name, size_t offset, size_t bytes) {
  const char* fd_text = std::getenv(fd_variable);
  if (!fd_text) return nullptr;
  const long long fd = parseInt(fd_text).value_or(-1);
  if (fd < 0 || fd > kMaxNumber || !isMemfd(static_cast<int>(fd), name)) return nullptr;
  struct stat st {};
  void* map = MAP_FAILED;
  if (::fstat(static_cast<int>(fd), &st) == 0 && static_cast<size_t>(st.st_size) >= offset + bytes) {
    map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, static_cast<int>(fd), static_cast<off_t>(offset));
  }
  ::close(static_cast<int>(fd));
  return map == MAP_FAILED ? nullptr : map;
}

}  // namespace accel
