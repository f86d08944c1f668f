// SPDX-License-Identifier: Apache-2.0
// The plan of every convention a launch meets, built from fake facts (tests/support/fake_facts.h)
// in milliseconds, without a process: SLURM's variables, a hostfile head, Accelerate's mpirun,
// DeepSpeed's MPI launchers and srun, where machine 0 is reached (ports, addresses, interfaces),
// and a round's new plan. Flags, torchrun's grammar and the pods' conventions have theirs in
// launch_plan_test.cc and torchrun_flags_test.cc.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/plan/build.h"
#include "lib/launch/plan/worker_env.h"
#include "tests/support/fake_facts.h"
#include "tests/support/process.h"

using namespace accel;
using namespace accel::launch::plan;
using namespace accel::launch::settings;
using namespace accel::test;
using Catch::Matchers::Contains;

namespace {

std::string notes(const LaunchPlan& p) { return join(p.notes, "\n"); }

bool has(const std::vector<std::string>& words, const std::string& word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

}  // namespace

TEST_CASE("conventions: SLURM's variables place the machine, a flag beats them", "[plan][slurm]") {
  FakeMachine m(2);
  m.facts.machine.env = {{"SLURM_JOB_ID", "4242"},
                         {"SLURM_NODEID", "1"},
                         {"SLURM_NNODES", "2"},
                         {"SLURM_STEP_ID", "0"},
                         {"SLURM_JOB_NODELIST", "gpu[07-08,11]"},
                         {"SLURM_GPUS_ON_NODE", "2"},
                         {"SLURM_PROCID", "1"}};
  m.network.names["gpu07"] = "10.0.0.7";
  const Planned p = launchFor({}, m);
  CHECK_THAT(join(p.settings.notes, "\n"),
             Contains("SLURM job 4242: machine_rank 1 of 2 machines, main_process_ip gpu07, 2 GPUs on this node"));
  CHECK(p.plan.machine_rank == 1);
  CHECK(p.plan.num_machines == 2);
  CHECK(p.plan.world_size == 4);
  CHECK(p.plan.master_addr == "gpu07");
  REQUIRE(p.plan.workers.size() == 2);
  CHECK(p.plan.workers[1].rank == 3);
  CHECK(envOf(p.plan, p.plan.workers[1], "ACCEL_RUN_ID") == "slurm-4242");
  CHECK(settingText(p.settings, "num_processes") == "4 (SLURM)");

  // A flag beats SLURM; machine 0 must hold the address it names (a dry run only warns).
  const std::vector<std::string> flags = {"--cpu", "--machine_rank", "0", "--main_process_ip", "10.1.1.1"};
  CHECK_THROWS_WITH(planFor(flags, m), Contains("main_process_ip 10.1.1.1 is not an address of this machine (host0)"));
  auto dry = flags;
  dry.push_back("--dry_run");
  const LaunchPlan d = planFor(dry, m);
  CHECK(d.machine_rank == 0);
  CHECK(d.master_addr == "10.1.1.1");
  CHECK_THAT(notes(d), Contains("warning: main_process_ip 10.1.1.1 is not an address of this machine"));
}

TEST_CASE("conventions: machine 0's port, settled on one machine, refused busy across machines", "[plan][port]") {
  FakeMachine m;
  m.network.busy = {29500};
  const LaunchPlan one = planFor({"--cpu", "--num_processes", "2"}, m);
  CHECK(one.master_port == m.network.free_port);
  CHECK(one.main_process_port == 29500);
  CHECK(envOf(one, one.workers[0], "MASTER_PORT") == std::to_string(m.network.free_port));
  CHECK_THAT(notes(one), Contains("port 29500 is busy (held by pid 7 (fake)); using free port 41000"));
  CHECK(planFor({"--cpu", "--num_processes", "2", "--dry_run"}, m).master_port == 29500);  // a dry run probes nothing
  CHECK(planFor({"--cpu", "--main_process_port", "0"}, m).master_port == m.network.free_port);
  const std::vector<std::string> two = {"--cpu", "--num_machines",    "2",        "--num_processes",
                                        "2",     "--main_process_ip", "127.0.0.1"};
  CHECK_THROWS_WITH(planFor(two, m), Contains("port 29500 on this machine is busy (held by pid 7 (fake))"));
  auto zero = two;
  zero.insert(zero.end(), {"--main_process_port", "0"});
  CHECK_THROWS_WITH(planFor(zero, m), Contains("main_process_port 0 (pick a free port) cannot work across machines"));
  // Machine 1 never takes machine 0's port for its own.
  auto second = two;
  second.insert(second.end(), {"--machine_rank", "1"});
  CHECK(planFor(second, m).master_port == 29500);
}

TEST_CASE("conventions: where machine 0 is reached decides the workers' interface", "[plan][network]") {
  FakeMachine m;
  m.network.names["node0"] = "10.0.0.1";
  m.network.interfaces["10.0.0.1"] = "eth0";
  m.network.routes["10.0.0.1"] = {"10.0.0.1", "eth0"};
  const std::vector<std::string> words = {"--cpu", "--num_machines",    "2",    "--num_processes",
                                          "2",     "--main_process_ip", "node0"};
  const LaunchPlan p = planFor(words, m);
  CHECK(envOf(p, p.workers[0], "GLOO_SOCKET_IFNAME") == "eth0");
  CHECK(envOf(p, p.workers[0], "NCCL_SOCKET_IFNAME") == "eth0");
  CHECK_THAT(notes(p), Contains("network: this machine reaches main_process_ip node0 from 10.0.0.1 on eth0"));
  // The launcher's own choice, and --env's, are kept.
  m.facts.machine.env["GLOO_SOCKET_IFNAME"] = "ib0";
  auto with_env = words;
  with_env.insert(with_env.end(), {"--env", "NCCL_SOCKET_IFNAME=ib1"});
  const LaunchPlan kept = planFor(with_env, m);
  CHECK(envOf(kept, kept.workers[0], "GLOO_SOCKET_IFNAME") == "<unset>");  // inherited from the launcher
  CHECK(envOf(kept, kept.workers[0], "NCCL_SOCKET_IFNAME") == "ib1");
  CHECK_THAT(notes(kept), Contains("kept from the environment: GLOO_SOCKET_IFNAME=ib0"));
  // A name that does not resolve is refused; a pod's peer resolves only once it runs.
  auto unknown = words;
  unknown.back() = "nowhere";
  CHECK_THROWS_WITH(planFor(unknown, m), Contains("main_process_ip nowhere (command line) does not resolve"));
  // torchrun's --local_addr names the interface, and must be this machine's.
  auto local = words;
  local.insert(local.end(), {"--machine_rank", "1", "--local_addr", "10.0.0.1"});
  const LaunchPlan by_local = planFor(local, m);
  CHECK(envOf(by_local, by_local.workers[0], "NCCL_SOCKET_IFNAME") == "eth0");
  local.back() = "10.9.9.9";
  CHECK_THROWS_WITH(planFor(local, m),
                    Contains("--local_addr 10.9.9.9 (command line) is not an address of this machine"));
}

TEST_CASE("conventions: a hostfile head plans every host's place", "[plan][hostfile][fleet]") {
  TempDir dir;
  const auto hf = dir.write("pool", "203.0.113.1 slots=4\n203.0.113.2 slots=4\n203.0.113.3 slots=2  # small\n");
  FakeMachine m;
  // What the old process test read from `--dry_run`: each selection's machines and processes.
  auto selection = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--hostfile", hf});
    const Planned p = launchFor(args, m);
    REQUIRE(p.plan.kind == LaunchPlan::Kind::Fleet);
    std::string lines = std::to_string(p.plan.hosts.size()) + " machine(s), " +
                        std::to_string(p.settings.hosts.slots()) + " process(es)\n";
    for (const HostPlan& h : p.plan.hosts) {
      lines += h.place.host + " " + std::to_string(h.place.procs) +
               (h.place.gpu_ids.empty() ? "" : " GPUs " + h.place.gpu_ids) + "\n";
    }
    return lines;
  };
  CHECK(selection({}) == "3 machine(s), 10 process(es)\n203.0.113.1 4\n203.0.113.2 4\n203.0.113.3 2\n");
  CHECK(selection({"--include", "203.0.113.1:1,3@203.0.113.3"}) ==
        "2 machine(s), 4 process(es)\n203.0.113.1 2 GPUs 1,3\n203.0.113.3 2\n");
  CHECK(selection({"--exclude", "203.0.113.2@203.0.113.1:0"}) ==
        "2 machine(s), 5 process(es)\n203.0.113.1 3 GPUs 1,2,3\n203.0.113.3 2\n");
  CHECK(selection({"--num_nodes", "2", "--num_gpus", "3"}) ==
        "2 machine(s), 6 process(es)\n203.0.113.1 3\n203.0.113.2 3\n");
  CHECK(selection({"--num_gpus", "3"}) == "3 machine(s), 8 process(es)\n203.0.113.1 3\n203.0.113.2 3\n203.0.113.3 2\n");
  CHECK(selection({"--num_machines", "1"}) == "1 machine(s), 4 process(es)\n203.0.113.1 4\n");
  CHECK(selection({"--num_nodes", "2", "--num_processes", "8"}) ==
        "2 machine(s), 8 process(es)\n203.0.113.1 4\n203.0.113.2 4\n");
  // Every place names machine 0 at the first host, and the job's identity.
  const LaunchPlan p = launchFor({"--hostfile", hf, "--rdzv_token", "tok"}, m).plan;
  for (size_t k = 0; k < p.hosts.size(); ++k) {
    CHECK(p.hosts[k].place.machine_rank == static_cast<int>(k));
    CHECK(p.hosts[k].place.num_machines == 3);
    CHECK(p.hosts[k].place.main_addr == "203.0.113.1");
    CHECK(p.hosts[k].place.main_port == 29500);
    CHECK(p.hosts[k].place.token == "tok");
    CHECK_FALSE(p.hosts[k].local);
  }
}

TEST_CASE("conventions: a loopback main address is refused naming the addresses that would work",
          "[plan][hostfile][network]") {
  TempDir dir;
  const auto hf = dir.write("hosts", "localhost slots=1\n203.0.113.7 slots=1\n");
  FakeMachine m;
  m.network.interfaces = {{"127.0.0.1", "lo"}, {"10.0.0.5", "eth0"}};
  try {
    launchFor({"--hostfile", hf, "--main_process_ip", "127.0.0.1"}, m);
    FAIL("planned");
  } catch (const UsageError& e) {
    CHECK_THAT(e.what(), Contains("is a loopback address, which 203.0.113.7 cannot reach"));
    CHECK(e.hint() ==
          "list machine 0 in the hostfile by a name or address the other hosts reach, or give "
          "--main_process_ip one of this machine's: eth0 10.0.0.5");
  }
  // The hint followed: the plan names that address to every host.
  const LaunchPlan p = launchFor({"--hostfile", hf, "--main_process_ip", "10.0.0.5"}, m).plan;
  CHECK(p.hosts.at(1).place.main_addr == "10.0.0.5");
  m.network.interfaces = {{"127.0.0.1", "lo"}};
  CHECK_THROWS_WITH(launchFor({"--hostfile", hf, "--main_process_ip", "127.0.0.1"}, m),
                    Contains("is a loopback address"));
  try {
    launchFor({"--hostfile", hf, "--main_process_ip", "127.0.0.1"}, m);
  } catch (const UsageError& e) {
    CHECK_THAT(e.hint(), Contains("this machine has no address but loopback"));
  }
}

TEST_CASE("conventions: Accelerate's mpirun runs every rank, with the workers' variables", "[plan][mpirun]") {
  FakeMachine m;
  m.facts.machine.as_root = true;
  const LaunchPlan p = planFor({"--cpu", "--num_processes", "4", "--num_machines", "2", "--main_process_ip",
                                "127.0.0.1", "--mpirun_hostfile", "/etc/hosts.mpi"},
                               m);
  REQUIRE(p.workers.size() == 1);
  const WorkerSpec& w = p.workers[0];
  CHECK(w.label == "mpirun");
  CHECK_FALSE(p.torchrun_env);
  const std::vector<std::string> head(w.argv.begin(), w.argv.begin() + 10);
  CHECK(head == std::vector<std::string>{"/usr/bin/mpirun", "--hostfile", "/etc/hosts.mpi", "--npernode", "2", "-n",
                                         "4", "--bind-to", "socket", "--noprefix"});
  for (const auto& [name, value] : workerEnvironment(p, w)) {
    INFO(name);
    CHECK(has(w.argv, name));  // exported to every rank with -x
  }
  CHECK(envOf(p, w, "OMPI_ALLOW_RUN_AS_ROOT") == "1");
  CHECK(envOf(p, w, "RANK") == "<unset>");  // mpirun gives each rank its own
  CHECK(w.argv.back() == "/bin/true");
  FakeMachine gpus(2);
  CHECK_THROWS_WITH(planFor({"--num_processes", "2", "--mpirun_hostfile", "/h"}, gpus),
                    Contains("--mpirun_hostfile starts CPU workers through mpirun, but this launch uses GPUs"));
}

TEST_CASE("conventions: DeepSpeed's MPI launchers and srun", "[plan][mpirun][slurm]") {
  TempDir dir;
  const auto hf = dir.write("hosts", "node-a slots=2\nnode-b slots=2\n");
  const std::string config =
      "distributed_type: DEEPSPEED\nnum_machines: 2\nnum_processes: 4\n"
      "deepspeed_config:\n  deepspeed_hostfile: " +
      hf + "\n  deepspeed_multinode_launcher: openmpi\n";
  FakeMachine m(2);
  m.facts.mpi_hostfile = "/tmp/accel-mpi-hosts-x/hostfile";
  m.facts.machine.env["NCCL_DEBUG"] = "INFO";
  const Planned p = launchFor({}, m, config);
  REQUIRE(p.plan.workers.size() == 1);
  const WorkerSpec& w = p.plan.workers[0];
  CHECK(p.plan.num_machines == 1);  // one launcher, this one: mpirun's ranks need no job channel
  CHECK(p.plan.world_size == 4);
  CHECK(has(w.argv, "/tmp/accel-mpi-hosts-x/hostfile"));
  CHECK(envOf(p.plan, w, "MASTER_ADDR") == "node-a");  // the first host: rank 0's store
  CHECK(envOf(p.plan, w, "NCCL_DEBUG") == "INFO");     // forwarded to every host
  CHECK(has(w.argv, "NCCL_DEBUG"));
  CHECK(has(w.argv, "plm_rsh_agent"));
  // MPICH's mpirun cannot pass ssh options.
  std::string mpich = config;
  mpich.replace(mpich.find("openmpi"), 7, "mpich");
  CHECK_THROWS_WITH(planFor({"--ssh_port", "2222"}, m, mpich),
                    Contains("mpich's mpirun cannot pass --ssh_args/--ssh_port"));
  // slurm: one launcher per node through srun, inside an allocation.
  std::string slurm = config;
  slurm.replace(slurm.find("openmpi"), 7, "slurm");
  CHECK_THROWS_WITH(planFor({}, m, slurm), Contains("inside a SLURM allocation, and this is not in one"));
  m.facts.machine.env["SLURM_JOB_ID"] = "7";  // in `salloc -N 2`
  m.facts.machine.env["SLURM_NNODES"] = "2";
  const Planned s = launchFor({"--exclude", "node-b"}, m, slurm);
  REQUIRE(s.plan.kind == LaunchPlan::Kind::Srun);
  CHECK(s.plan.srun_argv == std::vector<std::string>{"srun", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1",
                                                     "--kill-on-bad-exit=1", "--exclude=node-b", "/opt/accel/bin/accel",
                                                     "launch", "--exclude", "node-b"});
}

TEST_CASE("conventions: machines of different sizes, and a round's new plan", "[plan][layouts]") {
  FakeMachine m;
  m.network.interfaces["10.0.0.1"] = "eth0";
  const LaunchSettings s = settingsFor(
      {"--cpu", "--nproc_per_node", "3", "--nnodes", "2", "--node_rank", "0", "--master_addr", "10.0.0.1"}, m);
  const LaunchPlan first = build(s, m.facts);
  CHECK(first.world_at_join);
  CHECK(first.world_size == 6);  // as far as this machine knows: each machine as its own
  const LaunchPlan joined = build(s, m.facts, {0, 29500, 0, {{3, "default"}, {1, "default"}}});
  CHECK(joined.world_size == 4);
  CHECK(envOf(joined, joined.workers[2], "WORLD_SIZE") == "4");
  CHECK(envOf(joined, joined.workers[2], "ROLE_WORLD_SIZE") == "4");
  CHECK(machineOfRank(joined, 3) == 1);
  // A restart: machine 0 gave the round another port; nothing else moves.
  const LaunchPlan next = build(s, m.facts, {1, 29611, 0, {{3, "default"}, {1, "default"}}});
  CHECK(next.master_port == 29611);
  CHECK(envOf(next, next.workers[0], "MASTER_PORT") == "29611");
  CHECK(envOf(next, next.workers[0], "RANK") == envOf(joined, joined.workers[0], "RANK"));
  CHECK(envOf(joined, joined.workers[0], "MASTER_PORT") == "29500");  // the earlier plan is untouched
}
