// SPDX-License-Identifier: Apache-2.0
// --numa-binding's plan (lib/launch/plan/numa_binding.h) on the checked-in sysfs trees of
// tests/fakes/sysfs (make_trees.py says which machine each is), read by the real reader
// (facts/cpu_topology.h): for each mode, every worker's CPUs and memory node, derived by hand
// from the layouts. tests/peers/check_numa_binding.py sets the same plans beside torch 2.15's.
#include <catch2/catch.hpp>

#include "lib/common/cpu_list.h"
#include "lib/launch/facts/cpu_topology.h"
#include "lib/launch/plan/cpu_affinity.h"
#include "lib/launch/plan/numa_binding.h"
#include "tests/support/fake_facts.h"

using namespace accel::launch;

namespace {

const std::string kTrees = std::string(ACCEL_SOURCE_DIR) + "/tests/fakes/sysfs/";

const std::vector<std::string> kTwoSocketGpus = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                                                 "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"};

// "cpus@node" per worker.
std::vector<std::string> planOf(const std::string& tree, plan::NumaMode mode, const std::vector<std::string>& gpus,
                                int workers, const std::string& allowed = "",
                                std::vector<std::string>* notes = nullptr) {
  const auto topology = facts::readCpuTopology(kTrees + tree, gpus);
  const auto b = plan::bindNuma(mode, topology, *accel::parseCpuList(allowed), gpus, workers);
  if (notes) *notes = b.notes;
  std::vector<std::string> out;
  for (const auto& w : b.workers) out.push_back(accel::cpuListText(w.cpus) + "@" + std::to_string(w.memory_node));
  return out;
}

}  // namespace

TEST_CASE("numa binding: the sysfs reader", "[numa]") {
  CHECK(accel::parseCpuList(" 0-2, 4,6-7\n") == std::vector<int>{0, 1, 2, 4, 6, 7});
  CHECK(accel::parseCpuList("") == std::vector<int>{});
  CHECK_FALSE(accel::parseCpuList("0-3:2"));
  CHECK_FALSE(accel::parseCpuList("3-1"));
  CHECK(facts::pciAddress("00000000:3B:00.0") == "0000:3b:00.0");
  CHECK(facts::pciAddress("0000:18:00.1") == "0000:18:00.0");  // torch forms function 0
  CHECK(facts::pciAddress("junk") == "");
  const auto t = facts::readCpuTopology(kTrees + "amd_nps2_ccx", {"0000:41:00.0", "0000:81:00.0", "0000:99:00.0"});
  CHECK(t.missing.empty());
  CHECK(t.nodes == std::vector<int>{0, 1});
  CHECK(t.node_cpus.at(1) == *accel::parseCpuList("8-15,24-31"));
  CHECK(t.core_of.at(21) == 5);
  CHECK(t.complex_of.at(21) == 4);  // the L3 (index3), not L1/L2, and not the instruction cache
  CHECK(t.gpu_node.at("0000:81:00.0") == 1);
  CHECK(t.gpu_node.count("0000:99:00.0") == 0);  // no such device
  CHECK(!facts::readCpuTopology(kTrees + "no_numa", {}).missing.empty());
}

TEST_CASE("numa binding: a two-socket machine with 8 GPUs on two nodes", "[numa]") {
  using M = plan::NumaMode;
  const auto& g = kTwoSocketGpus;
  CHECK(planOf("two_socket_8gpu", M::Node, g, 8) ==
        std::vector<std::string>{"0-7,16-23@0", "0-7,16-23@0", "0-7,16-23@0", "0-7,16-23@0", "8-15,24-31@1",
                                 "8-15,24-31@1", "8-15,24-31@1", "8-15,24-31@1"});
  CHECK(planOf("two_socket_8gpu", M::Socket, g, 2) == std::vector<std::string>{"0-7,16-23@0", "0-7,16-23@0"});
  // 8 cores per node, 4 GPUs: 2 cores (4 CPUs with their siblings) each.
  CHECK(planOf("two_socket_8gpu", M::Exclusive, g, 8) ==
        std::vector<std::string>{"0-1,16-17@0", "2-3,18-19@0", "4-5,20-21@0", "6-7,22-23@0", "8-9,24-25@1",
                                 "10-11,26-27@1", "12-13,28-29@1", "14-15,30-31@1"});
  // One L3 per socket: every GPU of a node shares it.
  CHECK(planOf("two_socket_8gpu", M::CoreComplex, g, 5)[4] == "8-15,24-31@1");
  CHECK_THROWS_WITH(planOf("two_socket_8gpu", M::Node, {g[0]}, 2),
                    Catch::Contains("--numa-binding: local rank 1 has no GPU (1 visible)"));
}

TEST_CASE("numa binding: an AMD socket with several L3 complexes per node", "[numa]") {
  using M = plan::NumaMode;
  const std::vector<std::string> g = {"0000:01:00.0", "0000:21:00.0", "0000:41:00.0", "0000:81:00.0"};
  std::vector<std::string> notes;
  // Node 0 has 2 complexes (cores 0-3, 4-7) for 3 GPUs: the third shares the first; node 1's GPU
  // takes its largest (lowest) complex.
  CHECK(planOf("amd_nps2_ccx", M::CoreComplex, g, 4, "", &notes) ==
        std::vector<std::string>{"0-3,16-19@0", "4-7,20-23@0", "0-3,16-19@0", "8-11,24-27@1"});
  CHECK(notes == std::vector<std::string>{
                     "--numa-binding core-complex: 2 cache complex(es) on node 0 for 3 workers: they share them"});
  // Largest first: with CPU 1 not allowed, complex 4-7 is the larger one on node 0.
  CHECK(planOf("amd_nps2_ccx", M::CoreComplex, g, 2, "0,2-31")[0] == "4-7,20-23@0");
  // Both nodes are on socket 0.
  CHECK(planOf("amd_nps2_ccx", M::Socket, g, 1) == std::vector<std::string>{"0-31@0"});
  // 8 cores on node 0 for 3 GPUs: 3, 3, 2.
  CHECK(planOf("amd_nps2_ccx", M::Exclusive, g, 4) ==
        std::vector<std::string>{"0-2,16-18@0", "3-5,19-21@0", "6-7,22-23@0", "8-15,24-31@1"});
}

TEST_CASE("numa binding: a workstation, hyperthreads, a restricted cgroup, no NUMA information", "[numa]") {
  using M = plan::NumaMode;
  CHECK(planOf("workstation", M::Exclusive, {"0000:01:00.0", "0000:02:00.0"}, 2) ==
        std::vector<std::string>{"0-3@0", "4-7@0"});
  // 6 cores of 2 siblings side by side for 4 GPUs: the first two take 2 cores.
  CHECK(planOf("hyperthreads", M::Exclusive, {"0000:17:00.0", "0000:31:00.0", "0000:b1:00.0", "0000:ca:00.0"}, 4) ==
        std::vector<std::string>{"0-3@0", "4-7@0", "8-9@0", "10-11@0"});
  // Allowed 2-5 only; GPU 1's numa_node is -1, so node 0 as torch reads it.
  const std::vector<std::string> g = {"0000:01:00.0", "0000:02:00.0"};
  CHECK(planOf("cgroup_restricted", M::Node, g, 2, "2-5") == std::vector<std::string>{"2-5@0", "2-5@0"});
  CHECK(planOf("cgroup_restricted", M::Exclusive, g, 2, "2-5") == std::vector<std::string>{"2-3@0", "4-5@0"});
  std::vector<std::string> notes;
  CHECK(planOf("cgroup_restricted", M::Exclusive, g, 2, "3", &notes) == std::vector<std::string>{"3@0", "3@0"});
  CHECK(notes == std::vector<std::string>{"--numa-binding exclusive: 1 usable physical cores on node 0 for 2 workers: "
                                          "they share them, one each, round robin (torchrun fails the launch)"});
  CHECK(planOf("no_numa", M::Node, {"0000:01:00.0"}, 1, "", &notes) == std::vector<std::string>{"@-1"});
  REQUIRE(notes.size() == 1);
  CHECK_THAT(notes[0], Catch::StartsWith("--numa-binding node: skipped, no NUMA information ("));
  CHECK_THAT(notes[0], Catch::EndsWith("possible cannot be read); the workers run unpinned"));
}

TEST_CASE("numa binding: CPU jobs spread over the nodes in blocks", "[numa]") {
  using M = plan::NumaMode;
  CHECK(planOf("two_socket_8gpu", M::Node, {}, 4) ==
        std::vector<std::string>{"0-7,16-23@0", "0-7,16-23@0", "8-15,24-31@1", "8-15,24-31@1"});
  CHECK(planOf("two_socket_8gpu", M::Exclusive, {}, 4) ==
        std::vector<std::string>{"0-3,16-19@0", "4-7,20-23@0", "8-11,24-27@1", "12-15,28-31@1"});
  // A node without a usable CPU gets no worker.
  CHECK(planOf("two_socket_8gpu", M::Node, {}, 2, "8-15") == std::vector<std::string>{"8-15@1", "8-15@1"});
  // A GPU job whose node has none runs unpinned, and says so.
  std::vector<std::string> notes;
  CHECK(planOf("two_socket_8gpu", M::Node, kTwoSocketGpus, 1, "8-15", &notes) == std::vector<std::string>{"@0"});
  CHECK(notes == std::vector<std::string>{"--numa-binding node: node 0 has no CPU this launcher may use (allowed: "
                                          "8-15): its workers run unpinned"});
}

TEST_CASE("numa binding: a launch's plan, and enable_cpu_affinity on a GPU job as torchrun's node", "[numa]") {
  accel::test::FakeMachine m(2);
  m.facts.cpu_topology = [] {
    return facts::readCpuTopology(kTrees + "workstation", {"0000:01:00.0", "0000:02:00.0"});
  };
  auto exclusive = accel::test::planFor({"--multi_gpu", "--num_processes", "2", "--numa-binding", "exclusive"}, m);
  REQUIRE(exclusive.workers.size() == 2);
  CHECK(exclusive.workers[1].cpus == std::vector<int>{4, 5, 6, 7});
  CHECK(exclusive.workers[1].memory_node == 0);
  auto affinity = accel::test::launchFor({"--multi_gpu", "--num_processes", "2", "--enable_cpu_affinity"}, m);
  CHECK(affinity.settings.supervision.numa_binding.value == "node");
  CHECK(affinity.settings.supervision.numa_binding.origin.text() == "enable_cpu_affinity");
  CHECK(affinity.plan.workers[0].cpus == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  // A CPU job's enable_cpu_affinity keeps its contiguous shares, with no memory policy.
  auto cpu = accel::test::planFor({"--cpu", "--num_processes", "2", "--enable_cpu_affinity"}, m);
  CHECK(cpu.workers[0].memory_node == -1);
  // No topology read: one note, the workers unpinned.
  accel::test::FakeMachine bare(2);
  auto none = accel::test::planFor({"--multi_gpu", "--num_processes", "2", "--numa-binding", "node"}, bare);
  CHECK(none.workers[0].cpus.empty());
  CHECK(std::count(none.notes.begin(), none.notes.end(),
                   "warning: --numa-binding node: skipped, no topology was read; the workers run unpinned") == 1);
}
