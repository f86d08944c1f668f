// SPDX-License-Identifier: Apache-2.0
// The pure parts of the launcher: SLURM hostlists, setting precedence, worker environments,
// paradigm exports, checks; the subreaper's child listing (adopted.h).
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "lib/common/cpu_list.h"
#include "lib/common/error.h"
#include "lib/common/process/adopted.h"
#include "lib/config/loader.h"
#include "lib/launch/facts/program.h"
#include "lib/launch/plan/cpu_affinity.h"
#include "lib/launch/plan/launch_plan.h"
#include "lib/launch/plan/worker_env.h"
#include "lib/launch/settings/slurm.h"
#include "tests/support/fake_facts.h"

using namespace accel;
using namespace accel::test;
using namespace accel::launch::facts;
using namespace accel::launch::plan;
using namespace accel::process;
using namespace accel::launch::settings;

namespace {

// The plan of `words` on a fake machine with `gpus` GPUs (tests/support/fake_facts.h).
LaunchPlan flagsPlan(const std::vector<std::string>& words, const std::string& config_text = "", int gpus = 0) {
  FakeMachine m(gpus);
  return planFor(words, m, config_text);
}

}  // namespace

TEST_CASE("slurm hostlists expand like scontrol show hostnames", "[slurm]") {
  CHECK(expandHostlist("node[01-04,07]") == std::vector<std::string>{"node01", "node02", "node03", "node04", "node07"});
  CHECK(expandHostlist("a,b[1-2],c") == std::vector<std::string>{"a", "b1", "b2", "c"});
  CHECK(expandHostlist("rack[1-2]-n[8-9]") == std::vector<std::string>{"rack1-n8", "rack1-n9", "rack2-n8", "rack2-n9"});
  CHECK(expandHostlist("gpu-a100") == std::vector<std::string>{"gpu-a100"});
  CHECK_THROWS_AS(expandHostlist("node[1-"), UsageError);
  CHECK_THROWS_AS(expandHostlist("node[3-1]"), UsageError);
  // Found by fuzzing (tests/fuzz/regressions/slurm_hostlist): refused before expanding, not
  // gigabytes of names.
  CHECK_THROWS_WITH(expandHostlist("n[0-999999999]"), Catch::Contains("65536"));
  auto s = detectSlurm({{"SLURM_JOB_ID", "9"},
                        {"SLURM_NODEID", "3"},
                        {"SLURM_NNODES", "4"},
                        {"SLURM_JOB_NODELIST", "n[10-13]"},
                        {"SLURM_GPUS_ON_NODE", "8(x4)"}});
  REQUIRE(s);
  CHECK(s->node_rank == 3);
  CHECK(s->num_nodes == 4);
  CHECK(s->first_host == "n10");
  CHECK(s->gpus_on_node == 8);
  CHECK_FALSE(s->in_step);
  CHECK_FALSE(detectSlurm({{"PATH", "/bin"}}));
  // Digits past long long are a count out of range, not "not a number".
  CHECK_THROWS_WITH(detectSlurm({{"SLURM_JOB_ID", "9"},
                                 {"SLURM_NODEID", "0"},
                                 {"SLURM_NNODES", "99999999999999999999"},
                                 {"SLURM_JOB_NODELIST", "n1"}}),
                    "SLURM_NNODES='99999999999999999999' is out of range (at most 1048576)");
}

TEST_CASE("plan: ranks, world and rendezvous for machine 1 of 2", "[plan]") {
  const std::vector<std::string> words = {"--cpu",    "--num_machines",      "2",    "--num_processes",
                                          "4",        "--machine_rank",      "1",    "--main_process_ip",
                                          "10.0.0.1", "--main_process_port", "29555"};
  FakeMachine m;
  m.network.busy = {29555};  // machine 1 never takes machine 0's port for its own
  LaunchPlan p = planFor(words, m);
  REQUIRE(p.workers.size() == 2);
  CHECK(p.workers[1].rank == 3);
  CHECK(envOf(p, p.workers[1], "RANK") == "3");
  CHECK(envOf(p, p.workers[1], "LOCAL_RANK") == "1");
  CHECK(envOf(p, p.workers[1], "GROUP_RANK") == "1");
  CHECK(envOf(p, p.workers[1], "MASTER_ADDR") == "10.0.0.1");
  CHECK(envOf(p, p.workers[1], "MASTER_PORT") == "29555");
  CHECK(envOf(p, p.workers[1], "OMP_NUM_THREADS") == "4");  // 8 physical cores / 2 local workers
  CHECK(envOf(p, p.workers[1], "ACCEL_MACHINE") == "host0");
  // Machines derive the same run id and token from the rendezvous address.
  FakeMachine other_machine;
  other_machine.facts.machine.random_hex = "ffffffffffffffffffffffffffffffff";
  LaunchPlan other = planFor(words, other_machine);
  CHECK(envOf(other, other.workers[0], "ACCEL_STORE_TOKEN") == envOf(p, p.workers[0], "ACCEL_STORE_TOKEN"));
}

TEST_CASE("plan: precedence and origins", "[plan]") {
  FakeMachine m(2);
  const std::string config =
      "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: bf16\nrdzv_backend: c10d\nsame_network: false\n";
  const Planned p = launchFor({"--mixed_precision", "fp16"}, m, config);
  CHECK(p.settings.keys.text("mixed_precision") == "fp16");
  CHECK(p.settings.keys.origin("mixed_precision").source == Source::CommandLine);
  CHECK(p.settings.placement.num_processes.origin.source == Source::ConfigFile);
  CHECK(p.settings.placement.main_process_port.origin.source == Source::Default);
  CHECK(settingText(p.settings, "mixed_precision") == "fp16 (command line)");
  CHECK(settingText(p.settings, "num_processes") == "2 (config file)");
  CHECK(settingText(p.settings, "main_process_port") == "29500 (default)");
  CHECK(p.settings.keys.text("rdzv_backend") == "c10d");
  CHECK(envOf(p.plan, p.plan.workers[0], "ACCELERATE_USE_CPU") ==
        "<unset>");  // as Accelerate's multi-GPU path: not said
  bool noted = false;
  for (const auto& n : p.settings.notes) noted |= n.find("rdzv_backend c10d") != std::string::npos;
  CHECK(noted);
  // torchrun's flags that a static rendezvous has no use for are named, not silently dropped.
  const std::vector<std::string> words = {
      "--mixed_precision", "fp16", "--rdzv_conf", "join_timeout=900,read_timeout=60", "--monitor_interval", "5"};
  const Planned q = launchFor(words, m);
  std::string notes;
  for (const auto& n : q.settings.notes) notes += n + "\n";
  CHECK_THAT(notes,
             Catch::Contains("--rdzv_conf read_timeout ignored") && Catch::Contains("--monitor_interval ignored"));
  CHECK(q.plan.join_timeout == 900);  // torchrun's key, honoured
  CHECK(q.plan.job_port == q.plan.master_port + 1);
  CHECK(q.plan.heartbeat_timeout == 30);
  CHECK_THROWS_WITH(flagsPlan({"--rdzv_conf", "join_timeout=0"}, "", 2),
                    Catch::Contains("--rdzv_conf join_timeout=0: '0' is not a whole number of seconds above 0"));
}

TEST_CASE("plan: DeepSpeed and FSDP settings are exported as Accelerate exports them", "[plan]") {
  LaunchPlan ds = flagsPlan({"--zero_stage", "2"},
                            "distributed_type: DEEPSPEED\nnum_processes: 2\nmixed_precision: bf16\n"
                            "deepspeed_config:\n  zero_stage: 3\n  offload_param_device: cpu\n  zero3_init_flag: true\n"
                            "  gradient_accumulation_steps: 1\n",
                            2);
  const auto& w = ds.workers[0];
  CHECK(envOf(ds, w, "ACCELERATE_USE_DEEPSPEED") == "true");
  CHECK(envOf(ds, w, "ACCELERATE_DEEPSPEED_ZERO_STAGE") == "2");  // the flag wins
  CHECK(envOf(ds, w, "ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_DEVICE") == "cpu");
  CHECK(envOf(ds, w, "ACCELERATE_DEEPSPEED_ZERO3_INIT") == "true");
  CHECK(envOf(ds, w, "ACCELERATE_GRADIENT_ACCUMULATION_STEPS") == "1");
  CHECK(envOf(ds, w, "ACCELERATE_CONFIG_DS_FIELDS") ==
        "gradient_accumulation_steps,offload_param_device,zero3_init_flag,mixed_precision");
  CHECK(envOf(ds, w, "PYTHONPATH") == "/work");
  LaunchPlan fsdp = flagsPlan({},
                              "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_version: 2\n"
                              "  fsdp_reshard_after_forward: true\n  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n"
                              "  fsdp_transformer_layer_cls_to_wrap: LlamaDecoderLayer\n",
                              2);
  const auto& f = fsdp.workers[1];
  CHECK(envOf(fsdp, f, "ACCELERATE_USE_FSDP") == "true");
  CHECK(envOf(fsdp, f, "FSDP_VERSION") == "2");
  CHECK(envOf(fsdp, f, "FSDP_RESHARD_AFTER_FORWARD") == "true");
  CHECK(envOf(fsdp, f, "FSDP_SHARDING_STRATEGY") == "FULL_SHARD");
  CHECK(envOf(fsdp, f, "FSDP_TRANSFORMER_CLS_TO_WRAP") == "LlamaDecoderLayer");
  CHECK(envOf(fsdp, f, "FSDP_USE_ORIG_PARAMS") == "true");
  CHECK_THROWS_AS(
      flagsPlan({},
                "distributed_type: FSDP\nnum_processes: 2\nfsdp_config:\n  fsdp_cpu_ram_efficient_loading: true\n"
                "  fsdp_sync_module_states: false\n",
                2),
      UsageError);
}

TEST_CASE("plan: checks before anything starts", "[plan]") {
  CHECK_THROWS_WITH(flagsPlan({"--cpu", "--num_processes", "1", "--num_machines", "2", "--main_process_ip", "h"}),
                    Catch::Contains("num_processes 1 (command line) is fewer than num_machines 2"));
  CHECK_THROWS_WITH(flagsPlan({"--multi_gpu", "--num_processes", "1"}, "", 2),
                    Catch::Contains("--multi_gpu needs at least 2 processes"));
  CHECK_THROWS_WITH(flagsPlan({}, "distributed_type: XLA\n"),
                    Catch::Contains("distributed_type XLA cannot be launched by accel"));
  // Found by fuzzing (tests/fuzz/regressions/launch_settings): a typo'd count is refused before
  // a plan of that size is built, and no count is narrowed to int.
  CHECK_THROWS_WITH(flagsPlan({"--cpu", "--num_processes", "100000000"}),
                    Catch::Contains("num_processes 100000000 (command line) is more than accel can launch"));
  CHECK_THROWS_WITH(flagsPlan({"--cpu", "--num_processes", "8192"}),
                    Catch::Contains("is 8192 workers on this machine; accel starts at most 4096"));
  CHECK_THROWS_WITH(
      flagsPlan({}, "distributed_type: MULTI_GPU\nnum_machines: 4611686018427387904\nmain_process_ip: h\n", 4),
      Catch::Contains("is more than accel can launch"));
}

TEST_CASE("program resolution", "[program]") {
  ProgramOptions o;
  o.path_env = "/usr/bin:/bin";
  CHECK(resolveProgram({"true", "x"}, o) == std::vector<std::string>{"/usr/bin/true", "x"});
  CHECK_THROWS_WITH(resolveProgram({}, o), Catch::Contains("no program to launch"));
  o.module = o.no_python = true;
  CHECK_THROWS_WITH(resolveProgram({"m"}, o), Catch::Contains("cannot be combined"));
  ProgramOptions py;
  py.path_env = "/usr/bin:/bin";
  py.python = "/no/such/python";
  CHECK_THROWS_WITH(resolveProgram({"-"}, py), Catch::Contains("not found"));
  py.module = true;
  CHECK_THROWS_WITH(resolveProgram({"pkg.mod"}, py), Catch::Contains("Python interpreter '/no/such/python' not found"));
}

TEST_CASE("cpu affinity: usable CPUs split into contiguous shares, one per local worker", "[plan][affinity]") {
  using V = std::vector<int>;
  CHECK(splitCpus({0, 1, 2, 3, 4, 5, 6, 7}, 2) == std::vector<V>{{0, 1, 2, 3}, {4, 5, 6, 7}});
  CHECK(splitCpus({0, 1, 2, 3, 4, 5, 6}, 3) == std::vector<V>{{0, 1, 2}, {3, 4}, {5, 6}});
  CHECK(splitCpus({2, 3, 8, 9}, 4) == std::vector<V>{{2}, {3}, {8}, {9}});
  CHECK(splitCpus({0, 1}, 3) == std::vector<V>{{0}, {1}, {0}});  // more workers than CPUs: shared
  CHECK(splitCpus({}, 2) == std::vector<V>{{}, {}});             // unknown affinity: no pinning
  CHECK(cpuListText({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8");
  CHECK(cpuListText({3}) == "3");
  CHECK(cpuListText({}).empty());

  FakeMachine m;
  m.facts.machine.usable_cpus = {0, 1, 2, 3, 4, 5, 6, 7};
  LaunchPlan off = planFor({"--cpu", "--num_processes", "2"}, m);
  CHECK(off.workers[0].cpus.empty());  // the key is off by default: workers inherit the launcher's
  LaunchPlan on = planFor({"--cpu", "--num_processes", "2", "--enable_cpu_affinity"}, m);
  CHECK(on.workers[0].cpus == V{0, 1, 2, 3});
  CHECK(on.workers[1].cpus == V{4, 5, 6, 7});
  CHECK(envOf(on, on.workers[1], "ACCELERATE_CPU_AFFINITY") == "1");
  LaunchPlan crowded = planFor({"--cpu", "--num_processes", "12", "--enable_cpu_affinity"}, m);
  CHECK(crowded.workers[9].cpus == V{1});
  REQUIRE_FALSE(crowded.notes.empty());
  CHECK(crowded.notes.back().find("12 workers but 8 usable CPU(s) (0-7)") != std::string::npos);
}

// lib/common/process/adopted.h: the two ways of listing this process's children agree, and a
// grandchild whose parent exits is this process's child once this process is a subreaper.
TEST_CASE("adopted: children listed from /proc, an orphaned grandchild comes to the subreaper", "[launch][adopted]") {
  REQUIRE(adoptOrphanedDescendants());
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // forks the grandchild (which reports its pid), then exits at once
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      ::pause();
      _exit(0);
    }
    (void)!::write(ready[1], &grandchild, sizeof grandchild);
    _exit(0);
  }
  ::close(ready[1]);
  pid_t grandchild = -1;
  REQUIRE(::read(ready[0], &grandchild, sizeof grandchild) == static_cast<ssize_t>(sizeof grandchild));
  ::close(ready[0]);
  ::waitpid(child, nullptr, 0);
  auto has = [](const std::vector<pid_t>& pids, pid_t pid) {
    return std::find(pids.begin(), pids.end(), pid) != pids.end();
  };
  // Re-parenting happens as the child exits, before waitpid returns it.
  CHECK(has(adoptedChildren({}), grandchild));
  CHECK(has(childrenFromProcScan(), grandchild));
  CHECK_FALSE(has(adoptedChildren({grandchild}), grandchild));
  CHECK(killAdoptedChildren({}) >= 1);
  int status = 0;
  REQUIRE(::waitpid(grandchild, &status, 0) == grandchild);
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST_CASE("plan: the input rank is this machine's, none here, or an error where its terminal is", "[plan]") {
  std::vector<std::string> words = {"--cpu", "--num_machines",    "2",       "--num_processes", "4", "--machine_rank",
                                    "1",     "--main_process_ip", "10.0.0.1"};
  auto with = [&](const std::string& rank) {
    auto w = words;
    w.insert(w.end(), {"--stdin_rank", rank});
    return w;
  };
  CHECK(flagsPlan(words).stdin_rank == -1);  // the default, rank 0, runs on machine 0
  CHECK(flagsPlan(with("3")).stdin_rank == 3);
  CHECK(flagsPlan(with("1")).stdin_rank == -1);  // no terminal here: the same command runs on every machine
  FakeMachine terminal;
  terminal.facts.machine.stdin_terminal = true;
  CHECK_THROWS_WITH(planFor(with("1"), terminal),
                    Catch::Contains("--stdin_rank 1: rank 1 runs on machine 0, not on this one (machine 1)"));
  CHECK(planFor(with("none"), terminal).stdin_rank == -1);
}

TEST_CASE("plan: a Python job on GPUs gets torch's NCCL dump on a timeout, in the launcher's folder", "[plan]") {
  SpawnContext c;
  c.flight_hook = "/run/accel-fr-x";
  auto env = [&c](const LaunchPlan& p) {
    std::map<std::string, std::string> out;
    for (const auto& [k, v] : workerEnvironment(p, p.workers.at(1), c)) out[k] = v;
    return out;
  };
  const std::vector<std::string> python = {"/usr/bin/python3", "train.py"};  // what the facts make of train.py
  FakeMachine m(2);
  m.facts.program = python;
  const LaunchPlan gpu = planFor({"--multi_gpu", "--num_processes", "2", "train.py"}, m);
  CHECK(gpu.torch_nccl);
  auto e = env(gpu);
  CHECK(e["TORCH_NCCL_DUMP_ON_TIMEOUT"] == "1");
  CHECK(e["TORCH_FR_DUMP_TEMP_FILE"] == "/run/accel-fr-x/torch_dump_rank_");
  CHECK(e["TORCH_NCCL_DEBUG_INFO_PIPE_FILE"] == "/run/accel-fr-x/torch_pipe_rank_");
  // The user's own settings of any of their names win, each alone.
  m.facts.machine.env["TORCH_NCCL_DEBUG_INFO_TEMP_FILE"] = "/mine/dump_";
  m.facts.machine.env["TORCH_NCCL_DUMP_ON_TIMEOUT"] = "0";
  e = env(planFor({"--multi_gpu", "--num_processes", "2", "train.py"}, m));
  CHECK(e.count("TORCH_NCCL_DUMP_ON_TIMEOUT") == 0);  // inherited from the launcher as the user set it
  CHECK(e.count("TORCH_FR_DUMP_TEMP_FILE") == 0);
  CHECK(e["TORCH_NCCL_DEBUG_INFO_PIPE_FILE"] == "/run/accel-fr-x/torch_pipe_rank_");
  // One the user gives the workers with --env wins too.
  FakeMachine mine(2);
  mine.facts.program = python;
  e = env(planFor({"--multi_gpu", "--num_processes", "2", "--env", "TORCH_NCCL_DUMP_ON_TIMEOUT=0", "train.py"}, mine));
  CHECK(e["TORCH_NCCL_DUMP_ON_TIMEOUT"] == "0");
  // CPU workers (Gloo) and --flight_recorder off: none of them.
  FakeMachine cpu;
  cpu.facts.program = python;
  const LaunchPlan gloo = planFor({"--cpu", "--num_processes", "2", "train.py"}, cpu);
  CHECK(gloo.torch_flight);
  CHECK_FALSE(gloo.torch_nccl);
  CHECK(env(gloo).count("TORCH_FR_DUMP_TEMP_FILE") == 0);
  FakeMachine off(2);
  off.facts.program = python;
  const LaunchPlan quiet =
      planFor({"--multi_gpu", "--num_processes", "2", "--flight_recorder", "off", "train.py"}, off);
  CHECK_FALSE(quiet.torch_nccl);
  CHECK(env(quiet).count("TORCH_NCCL_DUMP_ON_TIMEOUT") == 0);
}
