// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/facts/cpu_topology.h"
#include "lib/common/cpu_list.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "lib/common/strings.h"

namespace accel::launch::facts {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> readFile(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<int> readInt(const fs::path& path) {
  auto text = readFile(path);
  if (!text) return std::nullopt;
  auto n = parseInt(trim(*text));
  if (!n) return std::nullopt;
  return static_cast<int>(*n);
}

std::optional<std::vector<int>> readList(const fs::path& path) {
  auto text = readFile(path);
  if (!text) return std::nullopt;
  return parseCpuList(*text);
}

// The CPUs sharing `cpu`'s highest-level Data or Unified cache; the first index at that level
// wins, as in torch (an instruction cache never counts).
std::optional<std::vector<int>> largestCache(const fs::path& cpu_dir) {
  std::error_code ec;
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(cpu_dir / "cache", ec)) entries.push_back(e.path());
  std::sort(entries.begin(), entries.end());
  int best = -1;
  std::optional<std::vector<int>> shared;
  for (const auto& dir : entries) {
    const std::string name = dir.filename().string();
    if (name.rfind("index", 0) != 0 || name.size() == 5 ||
        !std::all_of(name.begin() + 5, name.end(), [](unsigned char c) { return std::isdigit(c); })) {
      continue;
    }
    auto type = readFile(dir / "type");
    auto level = readInt(dir / "level");
    if (!type || !level || (trim(*type) != "Data" && trim(*type) != "Unified") || *level <= best) continue;
    best = *level;
    shared = readList(dir / "shared_cpu_list");
  }
  return shared;
}

void readCpu(const fs::path& system, int cpu, CpuTopology& t) {
  const fs::path dir = system / "cpu" / ("cpu" + std::to_string(cpu));
  if (auto socket = readInt(dir / "topology" / "physical_package_id")) t.socket_of[cpu] = *socket;
  if (auto siblings = readList(dir / "topology" / "thread_siblings_list"); siblings && !siblings->empty()) {
    t.core_of[cpu] = siblings->front();
  }
  if (auto cache = largestCache(dir); cache && !cache->empty()) t.complex_of[cpu] = cache->front();
}

}  // namespace

std::string pciAddress(const std::string& bus_id) {
  // [domain:]bus:device.function, the domain 4 or 8 hex digits.
  const auto first = bus_id.find(':'), last = bus_id.rfind(':'), dot = bus_id.rfind('.');
  if (first == std::string::npos || first == last || dot == std::string::npos || dot < last) return "";
  std::string domain = bus_id.substr(0, first);
  if (domain.size() > 4) domain = domain.substr(domain.size() - 4);
  std::string out = domain + bus_id.substr(first, dot - first) + ".0";
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

CpuTopology readNumaNodes(const std::string& root) {
  CpuTopology t;
  const fs::path node = fs::path(root) / "devices" / "system" / "node";
  auto possible = readList(node / "possible");
  if (!possible || possible->empty()) {
    t.missing = "no NUMA information (" + (node / "possible").string() + " cannot be read)";
    return t;
  }
  t.nodes = *possible;
  for (int n : t.nodes) {
    if (auto list = readList(node / ("node" + std::to_string(n)) / "cpulist")) t.node_cpus[n] = *list;
  }
  return t;
}

CpuTopology readCpuTopology(const std::string& root, const std::vector<std::string>& pci_addresses) {
  CpuTopology t = readNumaNodes(root);
  if (!t.missing.empty()) return t;
  std::set<int> cpus;
  for (const auto& [node, list] : t.node_cpus) cpus.insert(list.begin(), list.end());
  for (int cpu : cpus) readCpu(fs::path(root) / "devices" / "system", cpu, t);
  for (const auto& address : pci_addresses) {
    if (auto node = readInt(fs::path(root) / "bus" / "pci" / "devices" / address / "numa_node")) {
      t.gpu_node[address] = *node;
    }
  }
  return t;
}

}  // namespace accel::launch::facts
