// SPDX-License-Identifier: Apache-2.0
// Sockets in one place: the launcher's port checks, the store's server and client, and the
// runtime's own-address lookup all use these. Every socket is close-on-exec. A call that fails
// returns -1 and says why in `error` (errno's text, lowercase); callers add where (host:port)
// and what to do about it. Thread-safe (no shared state).
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace accel::net {

// A listening, non-blocking TCP socket on host:port ("" = every interface; where that resolves
// to "::" one dual-stack socket serves IPv4 too). SO_REUSEADDR, so TIME_WAIT leftovers never
// make a port busy. On failure -1, `error` set and `error_number` the errno (EADDRINUSE: taken).
int listenTcp(const std::string& host, int port, std::string& error, int& error_number);

// Binds a fresh IPv4 socket on every interface to `port` (0: any), as listenTcp would, then
// closes it: the port it got, or -1.
int probePort(int port);

// The port a bound socket has.
int boundPort(int fd);

// Connects a TCP socket to host:port, each resolved address in turn, each attempt waiting until
// `deadline` at most; TCP_NODELAY set, left non-blocking. A socket that met itself (a connect to
// a free local port can pick that port as its source) counts as refused. -1 with `error`.
int connectTcp(const std::string& host, int port, std::chrono::steady_clock::time_point deadline, std::string& error);

// Milliseconds left until `deadline` for poll(): 0 once it passed, at most INT_MAX.
int remainingMs(std::chrono::steady_clock::time_point deadline);

// Everything the other end of `fd` sends until it closes, or what came by `deadline`.
std::string readUntilClosed(int fd, std::chrono::steady_clock::time_point deadline);

// Whether `host` names this machine's loopback (localhost, 127.x.y.z, ::1).
bool isLoopback(const std::string& host);

// The local IPv4 address this machine uses to reach `peer` (what peers can reach it at), or ""
// when there is no route. Connecting a UDP socket sends nothing; the kernel picks the route.
std::string localAddressTowards(const std::string& peer);

// The name of the network interface that holds IPv4 `address` ("eth0"), or "" when none does.
std::string interfaceOf(const std::string& address);

// How this machine reaches `peer`: the local address and the interface holding it; both "" when
// there is no route, the interface "" when no interface holds that address.
struct Route {
  std::string address, interface;
};
Route routeTowards(const std::string& peer);

// The IPv4 address at the other end of a connected socket ("10.0.0.2"), or "?".
std::string peerAddress(int fd);

// The IPv4 address `host` resolves to first ("10.0.0.1"), or "" when it does not resolve.
std::string resolveIPv4(const std::string& host);

// Every IPv4 address of this machine's interfaces but loopback ("eth0 10.0.0.1").
std::vector<std::string> ownAddresses();

// "IP:PORT" ("127.0.0.1:29500", "[::1]:29500") of a socket address; "" for another family.
std::string endpointText(const void* sockaddr_storage_ptr);

// Unix stream sockets; a name that starts with '@' is in the abstract namespace (no file).
// listenUnix: listening, non-blocking. connectUnix: connected within `deadline`, left
// non-blocking.
int listenUnix(const std::string& name, std::string& error);
int connectUnix(const std::string& name, std::chrono::steady_clock::time_point deadline, std::string& error);

}  // namespace accel::net
