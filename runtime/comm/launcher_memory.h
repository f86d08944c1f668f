// SPDX-License-Identifier: Apache-2.0
// Shared memory that the launcher hands its workers by an inherited descriptor (launch_env.h:
// the progress board, kProgressFd, and the flight recorder's rings, kFlightFd): a memfd of a
// known name. A program this process starts inherits the variable but not the descriptor, whose
// number may then be another file's: the name is checked. The descriptor is closed once read,
// so that programs this process starts do not hold the memory. Call once per variable.
#pragma once

#include <cstddef>

namespace accel {

// [offset, offset + bytes) of the memfd named `name` (without "memfd:") whose number the variable
// `fd_variable` holds, mapped shared; nullptr where there is none that long.
void* mapLauncherMemory(const char* fd_variable, const char* name, size_t offset, size_t bytes);

// This worker's place in that memory: ACCEL_LOCAL_SLOT, else its LOCAL_RANK (launch_env.h
// kLocalSlot); 0 where neither is set (a launch of one process), -1 where it is no number.
long long launcherSlot();

}  // namespace accel
