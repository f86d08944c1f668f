// SPDX-License-Identifier: Apache-2.0
// torchrun's command line, its PET_* defaults and the Kubernetes pods' conventions, down to the
// workers' environment: tests/compat/torchrun_2_15_flags.txt against the flag table, precedence
// (flag > PET_* / pod > config file > default), every bad input the launcher refuses before it
// starts anything, and the layouts of machines that run different counts.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/config/loader.h"
#include "lib/launch/job/job_messages.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/plan/build.h"
#include "lib/launch/plan/launch_plan.h"
#include "lib/launch/plan/plan_layout.h"
#include "lib/launch/plan/worker_env.h"
#include "lib/launch/settings/launch_args.h"
#include "lib/launch/settings/launcher_flag_table.h"
#include "lib/launch/settings/torchrun_args.h"
#include "tests/support/fake_facts.h"

using namespace accel;
using namespace accel::test;
using namespace accel::launch::job;
using namespace accel::launch::plan;
using namespace accel::launch::settings;
namespace job = accel::launch::job;

namespace {

using VarMap = std::map<std::string, std::string>;

// name -> disposition (acts, ignored, refused)
std::map<std::string, std::string> torchrunFlags() {
  std::ifstream in(ACCEL_SOURCE_DIR "/tests/compat/torchrun_2_15_flags.txt");
  std::map<std::string, std::string> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string name, disposition;
    words >> name >> disposition;
    out[name] = disposition;
  }
  return out;
}

// A pod named pod-1 with `gpus` GPUs and 4 usable CPUs, whose environment is `env`; pod-0 is
// another machine, this one answers to 10.0.0.9.
void describe(FakeMachine& m, const VarMap& env) {
  m.facts.machine.usable_cpus = {0, 1, 2, 3};
  m.facts.machine.hostname = "pod-1";
  m.facts.machine.env = env;
  m.network.names.insert({{"pod-0", "10.0.0.5"}, {"pod-1", "10.0.0.9"}, {"job-worker-0", "10.0.0.5"}});
  m.network.interfaces["10.0.0.9"] = "eth0";
  m.network.interfaces["10.0.0.1"] = "eth0";  // the PET_MASTER_ADDR of the cases where this is machine 0
}

Planned launched(const std::vector<std::string>& words, const VarMap& env = {}, const std::string& config_text = "",
                 Grammar grammar = Grammar::Launch, int gpus = 0) {
  FakeMachine m(gpus);
  describe(m, env);
  return launchFor(words, m, config_text, grammar);
}

LaunchPlan torchrunPlan(const std::vector<std::string>& words, const VarMap& env = {},
                        const std::string& config_text = "", Grammar grammar = Grammar::Launch, int gpus = 0) {
  return launched(words, env, config_text, grammar, gpus).plan;
}

std::string refusal(const std::vector<std::string>& words, const VarMap& env = {}, Grammar grammar = Grammar::Launch,
                    const std::string& config_text = "") {
  try {
    torchrunPlan(words, env, config_text, grammar);
  } catch (const UsageError& e) {
    return std::string(e.what()) + " | " + e.hint();
  }
  return "(accepted)";
}

std::string placement(const Planned& p, const std::string& key) { return settingText(p.settings, key); }

}  // namespace

TEST_CASE("torchrun flags: every flag of torchrun 2.15 is in the table, as the list says", "[launch][torchrun]") {
  const auto listed = torchrunFlags();
  REQUIRE(listed.size() == 33);  // the file was read
  std::map<std::string, const LauncherFlag*> rows;
  for (const auto& row : launcherFlags()) {
    if (row.torchrun) rows[std::string(row.name)] = &row;
  }
  for (const auto& [name, disposition] : listed) {
    INFO("--" << name << " (" << disposition << ")");
    if (name == "rdzv_backend") continue;  // a config key's flag (kTorchrunConfigFlags)
    REQUIRE(rows.count(name));
    const LauncherFlag& row = *rows[name];
    CHECK((disposition == "refused") == !row.refused.empty());
    CHECK((disposition == "ignored") == (row.help.find("ignored") != std::string_view::npos));
  }
  for (const auto& [name, row] : rows) {
    INFO("accel marks --" << name << " as torchrun's, but torchrun 2.15 has no such flag");
    CHECK(listed.count(name));
  }
}

TEST_CASE("torchrun flags: both spellings, short forms and argparse's prefixes", "[launch][torchrun]") {
  const auto a = parseLaunchArgs({"--nproc_per_node", "2", "--nnodes=1", "-r", "1", "-m", "pkg.train", "--lr", "1"},
                                 Grammar::Torchrun);
  const auto b =
      parseLaunchArgs({"--nproc-per-node=2", "--nnodes", "1", "--redirects", "1", "--module", "pkg.train", "--lr", "1"},
                      Grammar::Torchrun);
  for (const auto* o : {&a, &b}) {
    CHECK(o->nproc_per_node == "2");
    CHECK(o->nnodes == "1");
    CHECK(o->redirects == "1");
    CHECK(o->module);
    CHECK(o->command == std::vector<std::string>{"pkg.train", "--lr", "1"});
  }
  CHECK(parseLaunchArgs({"--nproc", "3", "x"}, Grammar::Torchrun).nproc_per_node == "3");
  CHECK(parseLaunchArgs({"-r3", "-t1", "x"}, Grammar::Torchrun).redirects == "3");  // argparse's attached values
  CHECK(parseLaunchArgs({"-r3", "-t1", "x"}, Grammar::Torchrun).tee == "1");
  CHECK_THROWS_WITH(parseLaunchArgs({"--n", "3", "x"}, Grammar::Torchrun), Catch::Contains("ambiguous option: --n"));
  CHECK_THROWS_WITH(parseLaunchArgs({"--num_processes", "3", "x"}, Grammar::Torchrun),
                    Catch::Contains("unknown option '--num_processes'"));
  // accel launch takes torchrun's flags too, but not its prefixes (Accelerate's allow_abbrev=False).
  CHECK(parseLaunchArgs({"--node-rank", "1", "x"}).node_rank == 1);
  CHECK_THROWS_WITH(parseLaunchArgs({"--nproc", "3", "x"}), Catch::Contains("unknown option"));
  CHECK(parseLaunchArgs({"--numa_binding", "node", "x"}).numa_binding == "node");  // torchrun's, in both grammars
  try {
    parseLaunchArgs({"--logs_specs", "mine", "x"});
    FAIL("--logs_specs was accepted");
  } catch (const UsageError& e) {
    CHECK_THAT(e.what(), Catch::Contains("--logs_specs"));
    CHECK_THAT(e.hint(), Catch::Contains("--log_dir"));
  }
}

TEST_CASE("torchrun flags: a two-machine command line means what it means to torchrun", "[launch][torchrun]") {
  const LaunchPlan p = torchrunPlan({"--nproc_per_node", "2", "--nnodes", "2:2", "--node_rank", "1", "--master_addr",
                                     "10.0.0.1", "--master_port", "29600", "--rdzv_id", "job7", "--role", "trainer"},
                                    {}, "", Grammar::Torchrun);
  CHECK(p.num_machines == 2);
  CHECK(p.machine_rank == 1);
  CHECK(p.master_addr == "10.0.0.1");
  CHECK(p.master_port == 29600);
  CHECK(p.world_at_join);  // each machine says its own count
  REQUIRE(p.workers.size() == 2);
  const WorkerSpec& w = p.workers[1];
  CHECK(w.rank == 3);
  CHECK(envOf(p, w, "LOCAL_WORLD_SIZE") == "2");
  CHECK(envOf(p, w, "GROUP_RANK") == "1");
  CHECK(envOf(p, w, "ROLE_NAME") == "trainer");
  CHECK(envOf(p, w, "TORCHELASTIC_RUN_ID") == "job7");
  CHECK(envOf(p, w, "OMP_NUM_THREADS") == "1");          // torchrun's, for several workers
  CHECK(envOf(p, w, launch_env::kUseCpu) == "<unset>");  // no Accelerate variables under torchrun
  CHECK(envOf(p, w, launch_env::kMixedPrecision) == "<unset>");
  // One process by default under torchrun; Accelerate's default is one per GPU.
  CHECK(torchrunPlan({}, {}, "", Grammar::Torchrun, 4).workers.size() == 1);
  CHECK(torchrunPlan({}, {}, "", Grammar::Launch, 4).workers.size() == 4);
  CHECK(torchrunPlan({"--nproc_per_node", "6"}, {}, "", Grammar::Torchrun, 4).workers.size() == 6);    // GPUs shared
  CHECK(torchrunPlan({"--nproc_per_node", "cpu"}, {}, "", Grammar::Torchrun, 2).workers.size() == 4);  // usable CPUs
  CHECK(launched({"--nproc_per_node", "cpu"}, {}, "", Grammar::Torchrun, 2).settings.paradigm.use_cpu.value);
  // --standalone's port 0: a free one, chosen in the plan (the fake network's).
  CHECK(torchrunPlan({"--standalone", "--nproc_per_node", "3"}, {}, "", Grammar::Torchrun).master_port == 41000);
  // torchrun's console: every stream but the redirected ones; its --tee only adds files.
  CHECK(torchrunPlan({"-t", "0"}, {}, "", Grammar::Torchrun).console_streams == 3);
  CHECK(torchrunPlan({"-r", "1", "--log_dir", "/tmp"}, {}, "", Grammar::Torchrun).console_streams == 2);
  CHECK(torchrunPlan({"--cpu", "--tee", "3", "-r", "0:1"}).console_streams_by_rank.at(0) == 2);
  CHECK(torchrunPlan({"-r", "3", "-t", "3"}, {}, "", Grammar::Torchrun).console_streams == 3);  // teed back
  CHECK(torchrunPlan({"-r", "3"}, {{"TMPDIR", "/tmp/x"}}, "", Grammar::Torchrun)
            .log_dir.rfind("/tmp/x/torchelastic_", 0) == 0);
  CHECK_THAT(refusal({"--cpu", "--tee", "3", "-r", "0:3"}), Catch::Contains("--redirects 0:3 without --log_dir"));
  CHECK_THAT(refusal({}, {{"PET_TEE", "7"}}, Grammar::Torchrun), Catch::Contains("PET_TEE '7' is not 0-3"));
  const LaunchPlan v = torchrunPlan({"--nproc_per_node", "2", "--virtual_local_rank"},
                                    {{"CUDA_VISIBLE_DEVICES", "4,6"}}, "", Grammar::Torchrun, 2);
  CHECK(envOf(v, v.workers[1], "LOCAL_RANK") == "0");
  CHECK(envOf(v, v.workers[1], "CUDA_VISIBLE_DEVICES") == "6");
  const LaunchPlan ids = torchrunPlan(
      {"--multi_gpu", "--num_processes", "2", "--gpu_ids", "2,3", "--virtual_local_rank"}, {}, "", Grammar::Launch, 4);
  const VarMap ids_env = [&] {
    VarMap out;
    for (const auto& [name, value] : workerEnvironment(ids, ids.workers[1]))
      CHECK(out.emplace(name, value).second);  // each once
    return out;
  }();
  CHECK(ids_env.count("CUDA_VISIBLE_DEVICES") == 1);
  CHECK(envOf(ids, ids.workers[1], "CUDA_VISIBLE_DEVICES") == "3");
}

TEST_CASE("torchrun flags: PET_* give defaults below the command line and above the config file",
          "[launch][torchrun]") {
  const VarMap pet = {{"PET_NNODES", "2"},         {"PET_NODE_RANK", "1"},    {"PET_MASTER_ADDR", "10.0.0.1"},
                      {"PET_NPROC_PER_NODE", "3"}, {"PET_MAX_RESTARTS", "2"}, {"PET_MODULE", "0"}};
  const std::string config = "distributed_type: MULTI_CPU\nmachine_rank: 0\nnum_machines: 1\nnum_processes: 8\n";
  const Planned p = launched({"--cpu"}, pet, config);
  CHECK(placement(p, "num_machines") == "2 (PET_NNODES)");
  CHECK(placement(p, "machine_rank") == "1 (PET_NODE_RANK)");
  CHECK(placement(p, "main_process_ip") == "10.0.0.1 (PET_MASTER_ADDR)");
  CHECK(placement(p, "nproc_per_node") == "3 (PET_NPROC_PER_NODE)");
  CHECK(placement(p, "max_restarts") == "2 (PET_MAX_RESTARTS)");
  CHECK(p.plan.workers.size() == 3);
  const Planned flagged = launched({"--cpu", "--machine_rank", "0", "--num_processes", "4"}, pet, config);
  CHECK(placement(flagged, "machine_rank") == "0 (command line)");
  CHECK(flagged.plan.workers.size() == 2);  // a typed total beats PET_NPROC_PER_NODE
  CHECK(parseLaunchArgs({"-m", "x"}).module);
  // A typed flag beats the variable, which is then not even read.
  CHECK(torchrunPlan({"--cpu", "--num_machines", "1"}, {{"PET_NNODES", "1:4"}}).num_machines == 1);
  CHECK(torchrunPlan({"--cpu", "--grace_period", "3"}, {{"PET_SHUTDOWN_TIMEOUT", "5"}}).grace_period == 3);
  CHECK(torchrunPlan({"--cpu", "--main_process_ip", "h", "--num_machines", "2"}, {{"PET_RDZV_ENDPOINT", "a:b:c"}})
            .master_addr == "h");
  CHECK(torchrunPlan({"--cpu", "--num_machines", "4", "--main_process_ip", "h"}, {{"PET_NNODES", "2"}}, config)
            .world_size == 8);  // the file's total of 8, over the typed 4 machines, not 8 on each of them
}

TEST_CASE("torchrun flags: every bad input is refused, naming the flag or variable", "[launch][torchrun]") {
  CHECK_THAT(refusal({"--cpu", "--nproc_per_node", "2", "--num_processes", "5", "--nnodes", "2", "--master_addr", "h"}),
             Catch::Contains("--num_processes 5 and --nproc_per_node 2 disagree"));
  CHECK_THAT(refusal({"--nnodes", "4:1"}, {}, Grammar::Torchrun),
             Catch::Contains("--nnodes 4:1: MIN 4 is above MAX 1") && Catch::Contains("--nnodes 1:4"));
  CHECK_THAT(refusal({"--nnodes", "1:4", "--rdzv_backend", "c10d"}, {}, Grammar::Torchrun),
             Catch::Contains("--nnodes 1:4: machines that come and go need a rendezvous"));
  CHECK_THAT(refusal({"--nnodes", "1:4", "--rdzv_backend", "c10d", "--rdzv_endpoint", "h:1", "--num_processes", "8"},
                     {}, Grammar::Launch),
             Catch::Contains("is the whole job's, but with --nnodes 1:4 the machines"));
  CHECK_THAT(refusal({"--rdzv_backend", "etcd"}, {}, Grammar::Torchrun),
             Catch::Contains("--rdzv_backend etcd needs --rdzv_endpoint HOST:PORT"));
  CHECK_THAT(refusal({"--nproc_per_node", "gpu"}, {}, Grammar::Torchrun),
             Catch::Contains("--nproc_per_node gpu: this machine has no GPU"));
  CHECK_THAT(refusal({"--standalone", "--nnodes", "2"}, {}, Grammar::Torchrun),
             Catch::Contains("a standalone job runs on one machine"));
  CHECK_THAT(refusal({"--nnodes", "2", "--node_rank", "2"}, {}, Grammar::Torchrun),
             Catch::Contains("machine_rank 2 (--node_rank) must be from 0 to 1"));
  CHECK_THAT(refusal({}, {{"PET_NNODES", "abc"}}, Grammar::Torchrun),
             Catch::Contains("PET_NNODES 'abc' is not a machine count"));
  CHECK_THAT(refusal({}, {{"PET_NNODES", "2"}, {"PET_NODE_RANK", "5"}}, Grammar::Torchrun),
             Catch::Contains("machine_rank 5 (PET_NODE_RANK) must be from 0 to 1"));
  CHECK_THAT(refusal({}, {{"PET_NODE_RANK", "x"}}), Catch::Contains("PET_NODE_RANK=x:"));
  CHECK_THAT(refusal({"--node_rank", "1", "--machine_rank", "0", "--num_machines", "2"}),
             Catch::Contains("--machine_rank 0 and --node_rank 1 disagree"));
  CHECK_THAT(refusal({"--start_method", "thread"}), Catch::Contains("not spawn, fork or forkserver"));
}

TEST_CASE("kubernetes: the first line says what the workers get, and from where", "[launch][torchrun]") {
  // A bare `accel launch` in a Kubeflow Trainer pod without GPUs: 1 process a machine, 2 machines.
  const VarMap pod = {{"PET_NNODES", "2"},
                      {"PET_NPROC_PER_NODE", "1"},
                      {"PET_NODE_RANK", "1"},
                      {"PET_MASTER_ADDR", "10.0.0.1"},
                      {"PET_MASTER_PORT", "23456"}};
  const Planned p = launched({}, pod);
  CHECK(p.settings.config_line ==
        "no config file at c.yaml; "
        "num_processes=2 (PET_NPROC_PER_NODE × PET_NNODES), num_machines=2 (PET_NNODES), "
        "distributed_type=MULTI_CPU (GPU probe: none visible); "
        "defaults: mixed_precision=no");
  CHECK(envOf(p.plan, p.plan.workers.at(0), "ACCELERATE_USE_CPU") == "True");
  // --cpu without a config file: one short line.
  const Planned cpu = launched({"--cpu", "--num_processes", "2"});
  CHECK(cpu.settings.config_line.size() < 100);
}

TEST_CASE("kubernetes: each operator's pod variables make the pod's machine of one job", "[launch][torchrun]") {
  const std::string image_config =
      "distributed_type: MULTI_CPU\nmachine_rank: 0\nnum_machines: 1\n";  // what an image may ship
  const VarMap trainer = {{"PET_NNODES", "3"},
                          {"PET_NPROC_PER_NODE", "2"},
                          {"PET_NODE_RANK", "2"},
                          {"PET_MASTER_ADDR", "job-node-0-0.job"},
                          {"PET_MASTER_PORT", "29400"}};
  const Planned t = launched({"--cpu"}, trainer, image_config);
  CHECK(t.settings.placement.pod->name == "Kubeflow Trainer v2");
  CHECK(t.plan.machine_rank == 2);
  CHECK(t.plan.num_machines == 3);
  CHECK(t.plan.master_port == 29400);
  const VarMap v1 = {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                     {"MASTER_ADDR", "job-master-0"},
                     {"MASTER_PORT", "23456"},
                     {"RANK", "1"},
                     {"WORLD_SIZE", "2"},
                     {"PET_NPROC_PER_NODE", "2"}};
  const Planned j = launched({"--cpu"}, v1, image_config);
  CHECK(j.settings.placement.pod->name == "PyTorchJob v1");
  CHECK(placement(j, "machine_rank") == "1 (PyTorchJob v1 RANK)");
  CHECK(placement(j, "num_machines") == "2 (PyTorchJob v1 WORLD_SIZE)");
  CHECK(j.plan.workers[0].rank == 2);
  CHECK(j.plan.unset == std::vector<std::string>{"RANK", "WORLD_SIZE"});
  CHECK(envOf(j.plan, j.plan.workers[0], "RANK") == "2");  // the worker's own, never the pod's
  VarMap in_slurm = v1;                                    // an sbatch script exporting the same four is no pod
  in_slurm["SLURM_JOB_ID"] = "7";
  CHECK_FALSE(launched({"--cpu"}, in_slurm, image_config).settings.placement.pod);
  VarMap bad_rank = v1;
  bad_rank["RANK"] = "2";
  CHECK_THAT(refusal({"--cpu"}, bad_rank), Catch::Contains("RANK=2 is not below WORLD_SIZE=2"));
  VarMap off = v1;
  off["ACCEL_K8S"] = "0";
  CHECK(torchrunPlan({"--cpu"}, off, image_config).machine_rank == 0);
  const VarMap elastic = {
      {"PET_NNODES", "2:2"}, {"PET_RDZV_BACKEND", "c10d"}, {"PET_RDZV_ENDPOINT", "job-worker-0:23456"}};
  const Planned e = launched({"--cpu"}, elastic, image_config);
  CHECK(e.settings.placement.pod->name == "PyTorchJob v1 with elasticPolicy");
  CHECK(e.plan.machine_rank == -1);  // not the endpoint's pod: numbered as it joins
  CHECK(e.plan.master_addr == "job-worker-0");
  CHECK(e.plan.master_port == 23456);
  // The image's total is per machine of its own count once the pod says how many machines.
  const LaunchPlan per = torchrunPlan({"--cpu"}, elastic, image_config + "num_processes: 2\n");
  CHECK(per.workers.size() == 2);
  CHECK(per.world_size == 4);
  VarMap v6 = elastic;
  v6["PET_RDZV_ENDPOINT"] = "[fd00::1]:23456";
  CHECK(torchrunPlan({"--cpu"}, v6).master_addr == "fd00::1");
  CHECK(torchrunPlan({"--cpu"}, v6).master_port == 23456);
  VarMap on_zero = elastic;
  on_zero["PET_RDZV_ENDPOINT"] = "pod-1";  // this pod
  CHECK(torchrunPlan({"--cpu"}, on_zero).machine_rank == 0);
  CHECK(torchrunPlan({"--cpu"}, on_zero).master_port == kRdzvDefaultPort);
  CHECK(e.plan.dynamic);  // 2:2 through a c10d endpoint: ranks given out each round, spares wait
  CHECK(e.plan.min_machines == 2);
  VarMap growing = elastic;
  growing["PET_NNODES"] = "1:3";
  const Planned g = launched({"--cpu"}, growing, image_config);
  CHECK(g.plan.dynamic);
  CHECK(g.plan.min_machines == 1);
  CHECK(g.plan.max_machines == 3);
  CHECK(placement(g, "min_machines") == "1 (PET_NNODES)");
  VarMap ranked = growing;  // a node rank with a range: torchrun ignores it, and so does accel, saying so
  ranked["PET_NODE_RANK"] = "1";
  const Planned r = launched({"--cpu"}, ranked, image_config);
  CHECK(r.plan.machine_rank == -1);
  CHECK_THAT(accel::join(r.plan.notes, "\n") + accel::join(r.settings.notes, "\n"),
             Catch::Contains("PET_NODE_RANK 1 ignored"));
}

TEST_CASE("layouts: machines of 1, 2 and 3 workers get contiguous ranks and torchrun's variables",
          "[launch][torchrun]") {
  // Machine 0 settles the layout at the join; the round's plan is built anew from it.
  FakeMachine m;
  describe(m, {});
  const LaunchSettings s =
      settingsFor({"--cpu", "--nproc_per_node", "2", "--nnodes", "3", "--node_rank", "1", "--master_addr", "h"}, m);
  const LaunchPlan before = build(s, m.facts);
  CHECK(before.world_size == 6);  // as this machine knows it: every machine as its own
  CHECK(before.layout == std::vector<MachineShare>(3, {2, "default"}));
  const std::vector<MachineShare> layout = {{1, "default"}, {2, "default"}, {3, "default"}};
  const LaunchPlan p = build(s, m.facts, {0, 29511, 1, layout});
  CHECK(p.master_port == 29511);
  CHECK(envOf(p, p.workers[0], "MASTER_PORT") == "29511");
  CHECK(p.world_size == 6);
  CHECK(p.workers[0].rank == 1);
  CHECK(p.workers[1].rank == 2);
  CHECK(envOf(p, p.workers[1], "WORLD_SIZE") == "6");
  CHECK(envOf(p, p.workers[1], "ROLE_WORLD_SIZE") == "6");
  CHECK(envOf(p, p.workers[1], "LOCAL_WORLD_SIZE") == "2");
  CHECK(machineOfRank(p, 0) == 0);
  CHECK(machineOfRank(p, 2) == 1);
  CHECK(machineOfRank(p, 5) == 2);
  // Roles count among their own machines, as torchrun's rank assignment.
  const LaunchPlan roles = build(s, m.facts, {0, 29511, 1, {{1, "eval"}, {2, "default"}, {3, "default"}}});
  CHECK(envOf(roles, roles.workers[1], "ROLE_RANK") == "1");
  CHECK(envOf(roles, roles.workers[1], "ROLE_WORLD_SIZE") == "5");
  CHECK(envOf(roles, roles.workers[1], "RANK") == "2");
  // A later round: the next port machine 0 gave, the same layout; the plan before it is untouched.
  const LaunchPlan next = build(s, m.facts, {1, 29600, 1, layout});
  CHECK(envOf(next, next.workers[1], "MASTER_PORT") == "29600");
  CHECK(envOf(p, p.workers[1], "MASTER_PORT") == "29511");
  // A total that does not divide: the first machines run one more.
  CHECK(
      torchrunPlan({"--cpu", "--num_processes", "5", "--num_machines", "2", "--main_process_ip", "h"}).workers.size() ==
      3);
  CHECK(torchrunPlan(
            {"--cpu", "--num_processes", "5", "--num_machines", "2", "--machine_rank", "1", "--main_process_ip", "h"})
            .workers[0]
            .rank == 3);
  // The layout travels in the start as runs of alike machines.
  std::vector<MachineShare> wide(1000, {8, "default"});
  wide.push_back({1, "eval x"});
  std::string error;
  auto decoded = job::decode(job::encode(job::Start{job::kProtocolVersion, 29500, 3, wide}), error);
  REQUIRE(decoded);
  CHECK(std::get<job::Start>(*decoded).layout == wide);
}
