// SPDX-License-Identifier: Apache-2.0
#include "lib/hardware/host_probe.h"

#include <arpa/inet.h>
#include <gnu/libc-version.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "lib/common/environment.h"
#include "lib/common/strings.h"

namespace accel {

namespace {

std::string osName() {
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line)) {
    if (startsWith(line, "PRETTY_NAME=")) {
      std::string value = line.substr(12);
      if (value.size() >= 2 && value.front() == '"') value = value.substr(1, value.size() - 2);
      return value;
    }
  }
  return "";
}

// Model, sockets and physical cores from /proc/cpuinfo ("physical id" / "core id" pairs).
void readCpuInfo(HostReport& h) {
  std::ifstream in("/proc/cpuinfo");
  std::string line, physical_id;
  std::set<std::string> sockets, cores;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (key == "model name" && h.cpu_model.empty()) h.cpu_model = value;
    if (key == "physical id") {
      physical_id = value;
      sockets.insert(value);
    }
    if (key == "core id") cores.insert(physical_id + "/" + value);
  }
  h.logical_cores = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  h.sockets = sockets.empty() ? 1 : static_cast<int>(sockets.size());
  h.physical_cores = cores.empty() ? h.logical_cores : static_cast<int>(cores.size());
  cpu_set_t set;
  CPU_ZERO(&set);
  h.usable_cores = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : h.logical_cores;
}

void readMemory(HostReport& h) {
  std::ifstream in("/proc/meminfo");
  std::string key;
  unsigned long long kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemTotal:") h.memory_total = kib * 1024;
    if (key == "MemAvailable:") h.memory_available = kib * 1024;
  }
}

int numaNodes() {
  std::error_code ec;
  int nodes = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/devices/system/node", ec)) {
    std::string name = entry.path().filename().string();
    if (startsWith(name, "node") && parseInt(name.substr(4))) ++nodes;
  }
  return nodes > 0 ? nodes : 1;
}

std::vector<NetInterface> interfaces() {
  std::vector<NetInterface> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr) continue;
    int family = a->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw = family == AF_INET
                          ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr)
                          : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr);
    if (!::inet_ntop(family, raw, text, sizeof text)) continue;
    out.push_back({a->ifa_name, family == AF_INET ? "ipv4" : "ipv6", text, (a->ifa_flags & IFF_LOOPBACK) != 0,
                   (a->ifa_flags & IFF_UP) != 0});
  }
  ::freeifaddrs(list);
  return out;
}

}  // namespace

HostReport probeHost() {
  HostReport h;
  if (std::string name = hostName(); name != "?") h.hostname = name;
  h.os_name = osName();
  utsname u{};
  if (::uname(&u) == 0) {
    h.kernel = u.release;
    h.arch = u.machine;
  }
  h.glibc = ::gnu_get_libc_version();
  readCpuInfo(h);
  readMemory(h);
  h.numa_nodes = numaNodes();
  h.interfaces = interfaces();
  return h;
}

}  // namespace accel
