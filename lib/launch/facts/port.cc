// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/facts/port.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/random_bytes.h"
#include "lib/common/socket.h"
#include "lib/common/strings.h"

namespace accel::launch::facts {

namespace {

// Socket inodes listening on `port`, from /proc/net/tcp and tcp6 (state 0A = LISTEN).
std::vector<std::string> listeningInodes(int port) {
  std::vector<std::string> inodes;
  const std::string hex_port = fmt::format(":{:04X}", port);
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::vector<std::string> f;
      for (auto& field : split(trim(line), ' ')) {
        if (!field.empty()) f.push_back(field);
      }
      if (f.size() > 9 && f[3] == "0A" && endsWith(f[1], hex_port)) {
        inodes.push_back(f[9]);
      }
    }
  }
  return inodes;
}

}  // namespace

bool portIsFree(int port) { return net::probePort(port) == port; }

int pickFreePort() {
  int low_ephemeral = 32768;  // Linux's default, when the setting cannot be read
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> low_ephemeral;
  constexpr int kLowest = 10000;  // under it lie well-known services' ports
  if (low_ephemeral > kLowest + 100) {
    thread_local std::mt19937 rng(static_cast<std::mt19937::result_type>(randomU64()));
    std::uniform_int_distribution<int> draw(kLowest, low_ephemeral - 1);
    for (int attempt = 0; attempt < 100; ++attempt) {
      const int port = draw(rng);
      if (net::probePort(port) == port) return port;
    }
  }
  int port = net::probePort(0);
  if (port <= 0) throw Error(std::string("cannot find a free TCP port: ") + std::strerror(errno));
  return port;
}

std::string portHolder(int port) {
  auto inodes = listeningInodes(port);
  if (inodes.empty()) return "";
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& proc : fs::directory_iterator("/proc", ec)) {
    std::string pid = proc.path().filename().string();
    if (!parseInt(pid)) continue;
    for (const auto& fd : fs::directory_iterator(proc.path() / "fd", ec)) {
      std::string target = fs::read_symlink(fd.path(), ec).string();
      for (const auto& inode : inodes) {
        if (target == "socket:[" + inode + "]") {
          std::string comm;
          std::ifstream(proc.path() / "comm") >> comm;
          return fmt::format("pid {} ({})", pid, comm);
        }
      }
    }
  }
  return "";
}

}  // namespace accel::launch::facts
