// SPDX-License-Identifier: Apache-2.0
// Memory that a process shares with the programs it starts: a memfd of a name (which the child
// checks: runtime/comm/launcher_memory.h), mapped here for as long as this object lives. The
// descriptor is close-on-exec; a child that should keep it names it (process/child.h keep_fds).
// Single-threaded.
#pragma once

#include <cstddef>
#include <string>

namespace accel {

class SharedMemory {
 public:
  SharedMemory() = default;
  ~SharedMemory();
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;

  // `bytes` of zeros under memfd `name`; "" when made, else why not (strerror's words).
  std::string open(const char* name, size_t bytes);
  int fd() const { return fd_; }  // -1 until made
  unsigned char* data() const { return map_; }
  size_t size() const { return size_; }

 private:
  int fd_ = -1;
  unsigned char* map_ = nullptr;
  size_t size_ = 0;
};

}  // namespace accel
