// SPDX-License-Identifier: Apache-2.0
// TCP ports on this machine: is one free, pick a free one, who holds one. Blocking, short.
#pragma once

#include <string>

namespace accel::launch::facts {

// True when a listening socket could bind `port` on all IPv4 addresses right now.
bool portIsFree(int port);

// A free port for rank 0's store, drawn at random below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range) and checked bindable; the OS's pick (bind to 0) only when none
// is found there. Why not simply the OS's pick: that is an ephemeral port, which any connect() on
// the machine may take as its source port before the worker binds it; below the range only
// another server can, and random draws make two launches starting together unlikely to meet.
// Throws Error when no port can be bound at all.
int pickFreePort();

// "pid 1234 (python3)" for the process listening on `port`, found through /proc; empty when it
// cannot be seen (another user's process, or a container boundary).
std::string portHolder(int port);

}  // namespace accel::launch::facts
