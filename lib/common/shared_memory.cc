// SPDX-License-Identifier: Apache-2.0
#include "lib/common/shared_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace accel {

SharedMemory::~SharedMemory() {
  if (map_) ::munmap(map_, size_);
  if (fd_ >= 0) ::close(fd_);
}

std::string SharedMemory::open(const char* name, size_t bytes) {
  const int fd = ::memfd_create(name, MFD_CLOEXEC);
  void* map = MAP_FAILED;
  if (fd >= 0 && ::ftruncate(fd, static_cast<off_t>(bytes)) == 0) {
    map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  if (map == MAP_FAILED) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return why;
  }
  fd_ = fd;
  map_ = static_cast<unsigned char*>(map);
  size_ = bytes;
  return "";
}

}  // namespace accel
