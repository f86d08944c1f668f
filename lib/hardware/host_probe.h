// SPDX-License-Identifier: Apache-2.0
// This machine: OS, CPU, memory, host name and network interfaces, read from /proc, /sys,
// uname and getifaddrs. Blocking (about a millisecond); never throws (unknown fields stay empty).
#pragma once

#include <string>
#include <vector>

namespace accel {

struct NetInterface {
  std::string name;
  std::string family;  // "ipv4" or "ipv6"
  std::string address;
  bool loopback = false;
  bool up = false;
};

struct HostReport {
  std::string hostname;
  std::string os_name;  // PRETTY_NAME of /etc/os-release
  std::string kernel;   // uname -r
  std::string arch;     // uname -m
  std::string glibc;
  std::string cpu_model;
  int sockets = 0;
  int physical_cores = 0;
  int logical_cores = 0;  // online CPUs
  int usable_cores = 0;   // CPUs this process may run on (affinity / cgroup cpuset)
  int numa_nodes = 0;
  unsigned long long memory_total = 0;      // bytes
  unsigned long long memory_available = 0;  // bytes (MemAvailable)
  std::vector<NetInterface> interfaces;
};

HostReport probeHost();

}  // namespace accel
