// SPDX-License-Identifier: Apache-2.0
// --numa-binding through the real binary on this machine's real /sys: each mode's plan as
// --dry_run shows it, then a real 2-rank launch whose workers report what the kernel holds
// (their Cpus_allowed_list and get_mempolicy()): every worker runs where it was planned, its
// memory preferring its node. The plans themselves, mode by mode, on fake machines:
// tests/unit/numa_binding_test.cc; against torch 2.15: tests/peers/check_numa_binding.py.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <regex>

#include "tests/cli/launch_support.h"
#include "tests/support/skip.h"

using namespace accel::test;

namespace {

// rank → "CPUS@NODE" from --dry_run's "(pinned to CPUs X, memory preferred on NUMA node N)".
std::map<int, std::string> planned(const std::string& out) {
  std::map<int, std::string> plans;
  std::regex rank(
      R"(rank (\d+) \(local rank \d+\):[^\n]*\n(?:  [A-Z_]+=[^\n]*\n)*  \(pinned to CPUs ([^,]+), memory preferred on NUMA node (\d+)\))");
  for (std::sregex_iterator it(out.begin(), out.end(), rank), end; it != end; ++it) {
    plans[std::stoi((*it)[1])] = (*it)[2].str() + "@" + (*it)[3].str();
  }
  return plans;
}

// rank → "CPUS@NODE" from the workers' own "cpus X" and "mempolicy 1 N" (1: MPOL_PREFERRED).
std::map<int, std::string> reported(const std::string& out) {
  std::map<int, std::string> cpus, nodes, both;
  std::regex cpu_line(R"(\[rank (\d+)\] cpus (\S+))"), policy(R"(\[rank (\d+)\] mempolicy 1 (\d+))");
  for (std::sregex_iterator it(out.begin(), out.end(), cpu_line), end; it != end; ++it)
    cpus[std::stoi((*it)[1])] = (*it)[2];
  for (std::sregex_iterator it(out.begin(), out.end(), policy), end; it != end; ++it)
    nodes[std::stoi((*it)[1])] = (*it)[2];
  for (auto& [rank, list] : cpus) both[rank] = list + "@" + (nodes.count(rank) ? nodes[rank] : "none");
  return both;
}

}  // namespace

TEST_CASE("numa launch: every mode pins each worker and its memory where the plan says", "[launch][numa]") {
  if (::access("/sys/devices/system/node/possible", R_OK) != 0) {
    return skip("this machine's /sys has no NUMA information (/sys/devices/system/node/possible)");
  }
  TempDir dir;
  for (const char* mode : {"node", "socket", "exclusive", "core-complex"}) {
    INFO(mode);
    const std::vector<std::string> args = {"--cpu", "--num_processes", "2", "--numa-binding", mode};
    auto dry = launch(dir, [&] {
      auto a = args;
      a.insert(a.end(), {"--dry_run", envWorker(), "--report-binding"});
      return a;
    }());
    REQUIRE(dry.exit_code == 0);
    const auto plan = planned(dry.out);
    REQUIRE(plan.size() == 2);
    auto real = launch(dir, [&] {
      auto a = args;
      a.insert(a.end(), {envWorker(), "--report-binding"});
      return a;
    }());
    INFO(real.out << real.err);
    REQUIRE(real.exit_code == 0);
    CHECK(reported(real.out) == plan);
  }
}

TEST_CASE("numa launch: both spellings under both grammars, torchrun's modes only", "[launch][numa]") {
  TempDir dir;
  auto torchrun = run({accelBinary(), "torchrun", "--nproc-per-node", "2", "--numa_binding=exclusive", "--no-python",
                       envWorker(), "--report-binding"},
                      {}, launchEnv(dir), 60000);
  CHECK(torchrun.exit_code == 0);
  CHECK(occurrences(torchrun.out, "] cpus ") == 2);
  auto bad = launch(dir, {"--cpu", "--numa-binding", "numa", "--dry_run", envWorker()});
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, "accel: error: --numa-binding 'numa' is not a mode"));
  CHECK(contains(bad.err, "choose node, socket, exclusive or core-complex"));
  // Fake GPUs whose PCI devices this machine's /sys does not have: their workers run unpinned, said once each.
  auto fake =
      launch(dir, {"--multi_gpu", "--num_processes", "2", "--numa-binding", "node", "--dry_run", envWorker()}, 2);
  CHECK(fake.exit_code == 0);
  CHECK(contains(fake.err,
                 "accel: warning: --numa-binding node: GPU 1's NUMA node is unknown (no numa_node for PCI "
                 "device '0000:28:00.0'): local rank 1 runs unpinned"));
}
