// SPDX-License-Identifier: Apache-2.0
// TCP ports on this machine: is one free, pick a free one, who holds one. Blocking, short.
#pragma once

#include <string>

namespace accel {

// True when a listening socket could bind `port` on all IPv4 addresses right now.
bool portIsFree(int port);

// A port the OS considers free (bind to port 0, read it back, close). Another process may take
// it before the worker binds it; the window is microseconds. Throws Error when none is found.
int pickFreePort();

// "pid 1234 (python3)" for the process listening on `port`, found through /proc; empty when it
// cannot be seen (another user's process, or a container boundary).
std::string portHolder(int port);

}  // namespace accel
