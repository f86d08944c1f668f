// SPDX-License-Identifier: Apache-2.0
// `accel launch` through the real binary: what each worker receives (rank, world, rendezvous,
// Accelerate's variables), precedence of flags over config, two machines on loopback, GPU
// checks against the fake NVML, SLURM detection, programs (.py, PATH, missing), --dry_run,
// a busy port, and a real PyTorch DDP job on Gloo.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <regex>
#include <set>

#include "lib/launch/cpu_affinity.h"
#include "tests/support/process.h"

using accel::test::accelBinary;
using accel::test::BackgroundProcess;
using accel::test::contains;
using accel::test::envWorker;
using accel::test::fakeNvmlLibrary;
using accel::test::run;
using accel::test::RunResult;
using accel::test::TempDir;

namespace {

// A hermetic environment: no user config, no real GPU library, `gpus` fake NVML GPUs.
std::map<std::string, std::string> launchEnv(const TempDir& dir, int gpus = 0,
                                             std::map<std::string, std::string> extra = {}) {
  if (gpus > 0) extra.emplace("ACCEL_NVML_LIBRARY", fakeNvmlLibrary());
  extra.emplace("FAKE_NVML_GPUS", std::to_string(gpus));
  extra.emplace("CUDA_VISIBLE_DEVICES", "");
  extra.emplace("OMP_NUM_THREADS", "");
  return accel::test::hermeticEnv(dir, std::move(extra));
}

RunResult launch(const TempDir& dir, std::vector<std::string> args, int gpus = 0,
                 std::map<std::string, std::string> extra = {}) {
  std::vector<std::string> argv = {accelBinary(), "launch"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, {}, launchEnv(dir, gpus, std::move(extra)), 60000);
}

// rank -> the worker's "env NAME=VALUE" lines as a map, parsed from "[rank N] env …" output.
std::map<int, std::map<std::string, std::string>> workerEnvs(const std::string& out) {
  std::map<int, std::map<std::string, std::string>> envs;
  std::regex line(R"(\[(?:[^\]:]+:)?rank (\d+)\] env ([A-Z_]+)=(.*))");
  for (std::sregex_iterator it(out.begin(), out.end(), line), end; it != end; ++it) {
    envs[std::stoi((*it)[1])][(*it)[2]] = (*it)[3];
  }
  return envs;
}

}  // namespace

TEST_CASE("launch: the environment of 1, 2 and 4 workers", "[launch]") {
  TempDir dir;
  for (int n : {1, 2, 4}) {
    INFO(n << " workers");
    auto r = launch(dir, {"--cpu", "--num_processes", std::to_string(n), "--main_process_port", "29611", envWorker()});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    auto envs = workerEnvs(r.out);
    REQUIRE(envs.size() == static_cast<size_t>(n));
    std::set<std::string> run_ids, tokens;
    for (int rank = 0; rank < n; ++rank) {
      auto& e = envs[rank];
      if (n == 1) {  // as Accelerate's simple launcher: no torchrun variables for a lone process
        for (const char* name : {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR",
                                 "MASTER_PORT", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT"}) {
          CHECK(e.count(name) == 0);
        }
      } else {
        CHECK(e["RANK"] == std::to_string(rank));
        CHECK(e["LOCAL_RANK"] == std::to_string(rank));
        CHECK(e["ROLE_RANK"] == std::to_string(rank));
        CHECK(e["WORLD_SIZE"] == std::to_string(n));
        CHECK(e["LOCAL_WORLD_SIZE"] == std::to_string(n));
        CHECK(e["ROLE_WORLD_SIZE"] == std::to_string(n));
        CHECK(e["GROUP_RANK"] == "0");
        CHECK(e["GROUP_WORLD_SIZE"] == "1");
        CHECK(e["ROLE_NAME"] == "default");
        CHECK(e["MASTER_ADDR"] == "127.0.0.1");
        CHECK(e["MASTER_PORT"] == "29611");
        CHECK(e["TORCHELASTIC_RESTART_COUNT"] == "0");
        CHECK(e["TORCHELASTIC_MAX_RESTARTS"] == "0");
        CHECK(e["TORCHELASTIC_RUN_ID"] == e["ACCEL_RUN_ID"]);
        CHECK(e["TORCHELASTIC_SIGNALS_TO_HANDLE"] == "SIGTERM,SIGINT,SIGHUP,SIGQUIT");
      }
      CHECK(e["ACCELERATE_MIXED_PRECISION"] == "no");
      CHECK(e["ACCELERATE_USE_CPU"] == "True");
      CHECK(e["ACCELERATE_DYNAMO_BACKEND"] == "NO");
      CHECK(std::stoi(e["OMP_NUM_THREADS"]) >= 1);
      CHECK(e.count("TORCHELASTIC_USE_AGENT_STORE") == 0);
      CHECK(e.count("CUDA_VISIBLE_DEVICES") == 0);
      CHECK(e["ACCEL_STORE_TOKEN"].size() == 32);
      run_ids.insert(e["ACCEL_RUN_ID"]);
      tokens.insert(e["ACCEL_STORE_TOKEN"]);
    }
    CHECK(run_ids.size() == 1);
    CHECK(tokens.size() == 1);
  }
  auto a = workerEnvs(launch(dir, {"--cpu", envWorker()}).out);
  auto b = workerEnvs(launch(dir, {"--cpu", envWorker()}).out);
  CHECK(a[0]["ACCEL_STORE_TOKEN"] != b[0]["ACCEL_STORE_TOKEN"]);  // a fresh secret per run
}

TEST_CASE("launch: flags beat the config file, which beats defaults, every key applies", "[launch][config]") {
  TempDir dir;
  std::string cfg = dir.write("cfg.yaml",
                              "distributed_type: MULTI_CPU\nnum_processes: 3\nmixed_precision: bf16\n"
                              "enable_cpu_affinity: true\ndebug: true\nmain_process_port: 29612\n"
                              "dynamo_config:\n  dynamo_backend: INDUCTOR\n  dynamo_use_fullgraph: true\n"
                              "deepspeed_config:\n  gradient_accumulation_steps: 4\n");
  auto r = launch(dir, {"--config_file", cfg, "--mixed-precision", "fp16", "--debug", envWorker()});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.err, "accel: using config file " + cfg + "\n"));
  auto envs = workerEnvs(r.out);
  REQUIRE(envs.size() == 3);
  CHECK(envs[2]["ACCELERATE_MIXED_PRECISION"] == "fp16");
  CHECK(envs[2]["ACCELERATE_DEBUG_MODE"] == "true");
  CHECK(envs[2]["MASTER_PORT"] == "29612");
  CHECK(envs[2]["ACCELERATE_DYNAMO_BACKEND"] == "INDUCTOR");
  CHECK(envs[2].count("ACCELERATE_GRADIENT_ACCUMULATION_STEPS") == 0);  // as Accelerate: under DeepSpeed only
  CHECK(contains(r.err, "accel:   mixed_precision"));                   // --debug: the settings table
  CHECK(std::regex_search(r.err, std::regex(R"(num_processes\s+3\s+\(config file\))")));
  CHECK(std::regex_search(r.err, std::regex(R"(mixed_precision\s+fp16\s+\(command line\))")));
  CHECK(std::regex_search(r.err, std::regex(R"(enable_cpu_affinity\s+true\s+\(config file\))")));
  auto dry = launch(dir, {"--config_file", cfg, "--dry_run", envWorker()});
  CHECK(contains(dry.out, "  ACCELERATE_CPU_AFFINITY=1\n"));
  CHECK(contains(dry.out, "  ACCELERATE_DYNAMO_USE_FULLGRAPH=True\n"));
}

TEST_CASE("launch: without a config one line names the defaults taken", "[launch][config]") {
  TempDir dir;
  auto r = launch(dir, {"--num_processes", "2", envWorker()});
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.err, "accel: no config file at " + dir.file("hf/accelerate/default_config.yaml") +
                            "; defaults: num_machines=1 (default), mixed_precision=no (default)"));
  auto quiet = launch(dir, {"-q", "--num_processes", "2", envWorker()});
  CHECK(quiet.err.empty());
  auto missing = launch(dir, {"--config_file", dir.file("typo.yaml"), envWorker()});
  CHECK(missing.exit_code == 2);
  CHECK(contains(missing.err, "accel: error: " + dir.file("typo.yaml") + ": config file does not exist"));
}

TEST_CASE("launch: a two-machine job on loopback", "[launch][multinode]") {
  TempDir dir;
  const std::string port = std::to_string(accel::test::freeLoopbackPort());
  auto machine = [&](int rank) {
    return std::make_unique<BackgroundProcess>(
        std::vector<std::string>{accelBinary(), "launch", "--cpu", "--num_machines", "2", "--num_processes", "4",
                                 "--machine_rank", std::to_string(rank), "--main_process_ip", "127.0.0.1",
                                 "--main_process_port", port, envWorker()},
        launchEnv(dir));
  };
  auto m0 = machine(0);
  auto m1 = machine(1);
  RunResult r0 = m0->wait(), r1 = m1->wait();
  INFO(r0.out << r0.err << r1.out << r1.err);
  REQUIRE(r0.exit_code == 0);
  REQUIRE(r1.exit_code == 0);
  auto e0 = workerEnvs(r0.out), e1 = workerEnvs(r1.out);
  REQUIRE((e0.size() == 2 && e0.count(0) && e0.count(1)));
  REQUIRE((e1.size() == 2 && e1.count(2) && e1.count(3)));
  CHECK(e1[3]["LOCAL_RANK"] == "1");
  CHECK(e1[3]["GROUP_RANK"] == "1");
  CHECK(e1[3]["GROUP_WORLD_SIZE"] == "2");
  CHECK(e1[3]["WORLD_SIZE"] == "4");
  CHECK(e1[3]["LOCAL_WORLD_SIZE"] == "2");
  CHECK(e1[3]["MASTER_PORT"] == port);
  // The same run id and store secret on both machines, with no coordination.
  CHECK(e0[0]["ACCEL_RUN_ID"] == e1[2]["ACCEL_RUN_ID"]);
  CHECK(e0[0]["ACCEL_STORE_TOKEN"] == e1[3]["ACCEL_STORE_TOKEN"]);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  CHECK(contains(r1.out, "[" + std::string(host) + ":rank 3] env RANK=3"));
}

TEST_CASE("launch: GPU counts are checked against the GPUs that exist", "[launch][gpu]") {
  TempDir dir;
  auto four = launch(dir, {"--dry_run", envWorker()}, 4);
  CHECK(contains(four.out, "4 worker(s) on machine 0 of 1, world size 4"));
  CHECK(contains(four.out, "  ACCELERATE_MIXED_PRECISION=no\n"));
  CHECK(!contains(four.out, "ACCELERATE_USE_CPU"));  // Accelerate's multi-GPU path does not say it
  auto over = launch(dir, {"--num_processes", "8", envWorker()}, 4);
  CHECK(over.exit_code == 2);
  CHECK(contains(over.err, "accel: error: 8 processes per machine but only 4 GPU(s) visible"));
  CHECK(contains(over.err, "accel: hint: pass --num_processes 4"));
  auto ids = launch(dir, {"--gpu_ids", "1,6", "--num_processes", "2", envWorker()}, 4);
  CHECK(ids.exit_code == 2);
  CHECK(contains(ids.err, "gpu_ids (command line) names GPU 6, but this machine has 4 GPU(s)"));
  auto subset = launch(dir, {"--gpu_ids", "2,3", "--multi_gpu", "--num_processes", "2", "--dry_run", envWorker()}, 4);
  CHECK(contains(subset.out, "  CUDA_VISIBLE_DEVICES=2,3\n"));
  auto none = launch(dir, {"--multi_gpu", "--num_processes", "2", envWorker()}, 0);
  CHECK(none.exit_code == 2);
  CHECK(contains(none.err, "needs GPUs, but none is visible"));
  CHECK(contains(none.err, "accel: hint: pass --cpu to run CPU workers"));
  auto cpu = launch(dir, {"--cpu", "--num_processes", "8", "--dry_run", envWorker()}, 4);
  CHECK(cpu.exit_code == 0);
  auto zero = launch(dir, {"--num_processes", "0", envWorker()});
  CHECK(zero.exit_code == 2);
  auto both = launch(dir, {"--cpu", "--use_fsdp", envWorker()});
  CHECK(both.exit_code == 2);
  CHECK(contains(both.err, "you can only use one of"));
}

TEST_CASE("launch: SLURM placement is detected from srun's variables", "[launch][slurm]") {
  TempDir dir;
  auto r = launch(dir, {"--dry_run", envWorker()}, 2,
                  {{"SLURM_JOB_ID", "4242"},
                   {"SLURM_NODEID", "1"},
                   {"SLURM_NNODES", "2"},
                   {"SLURM_STEP_ID", "0"},
                   {"SLURM_JOB_NODELIST", "gpu[07-08,11]"},
                   {"SLURM_GPUS_ON_NODE", "2"},
                   {"SLURM_PROCID", "1"}});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.err,
                 "accel: SLURM job 4242: machine_rank 1 of 2 machines, main_process_ip gpu07, 2 GPUs on this node"));
  CHECK(contains(r.out, "2 worker(s) on machine 1 of 2, world size 4, MASTER_ADDR=gpu07"));
  CHECK(contains(r.out, "rank 3 (local rank 1)"));
  CHECK(contains(r.out, "  ACCEL_RUN_ID=slurm-4242\n"));
  auto flag_wins =
      launch(dir, {"--cpu", "--dry_run", "--machine_rank", "0", "--main_process_ip", "10.1.1.1", envWorker()}, 0,
             {{"SLURM_JOB_ID", "4242"},
              {"SLURM_NODEID", "1"},
              {"SLURM_NNODES", "2"},
              {"SLURM_STEP_ID", "0"},
              {"SLURM_JOB_NODELIST", "gpu[07-08]"}});
  INFO(flag_wins.out << flag_wins.err);
  CHECK(flag_wins.exit_code == 0);
  CHECK(contains(flag_wins.out, "on machine 0 of 2"));
  CHECK(contains(flag_wins.out, "MASTER_ADDR=10.1.1.1"));
  // 10.1.1.1 is not this machine's: a dry run (perhaps planned elsewhere) warns where a launch refuses
  CHECK(contains(flag_wins.err, "warning: main_process_ip 10.1.1.1 is not an address of this machine"));
}

TEST_CASE("launch: programs — .py under python3, PATH lookup, missing ones fail first", "[launch][program]") {
  TempDir dir;
  std::string script = dir.write(
      "hello.py", "import os, sys\nprint('python', int(sys.stdout.write_through), os.environ['RANK'], sys.argv[1:])\n");
  auto py = launch(dir, {"--cpu", "--num_processes", "2", script, "--num_processes", "9"});
  INFO(py.out << py.err);
  REQUIRE(py.exit_code == 0);
  CHECK(contains(py.out, "[rank 1] python 1 1 ['--num_processes', '9']"));  // -u, and args untouched
  auto path = launch(dir, {"--cpu", "echo", "from", "PATH"});
  CHECK(contains(path.out, "[rank 0] from PATH\n"));
  auto missing = launch(dir, {"--cpu", "no-such-program-xyz"});
  CHECK(missing.exit_code == 2);
  CHECK(contains(missing.err, "accel: error: program 'no-such-program-xyz' not found on PATH"));
  auto missing_py = launch(dir, {"--cpu", dir.file("nope.py")});
  CHECK(missing_py.exit_code == 2);
  CHECK(contains(missing_py.err, "Python script '" + dir.file("nope.py") + "' does not exist"));
  std::string plain = dir.write("plain.sh", "echo hi\n");
  auto not_exec = launch(dir, {"--cpu", plain});
  CHECK(not_exec.exit_code == 2);
  CHECK(contains(not_exec.err, "'" + plain + "' is not executable"));
  auto module = launch(dir, {"--cpu", "--dry_run", "-m", "json.tool", "x"});
  CHECK(std::regex_search(module.out, std::regex(R"(rank 0 \(local rank 0\): \S*python3\S* -u -m json.tool x)")));
}

TEST_CASE("launch: --dry_run prints each rank's command and environment", "[launch]") {
  TempDir dir;
  auto r =
      launch(dir, {"--cpu", "--num_processes", "2", "--main_process_port", "29613", "--dry_run", envWorker(), "--a b"});
  REQUIRE(r.exit_code == 0);
  CHECK(contains(
      r.out,
      "accel launch plan: 2 worker(s) on machine 0 of 1, world size 2, MASTER_ADDR=127.0.0.1 MASTER_PORT=29613\n"));
  CHECK(contains(r.out, "rank 1 (local rank 1): " + std::string(envWorker()) + " '--a b'\n"));
  CHECK(contains(r.out, "  RANK=1\n"));
  CHECK_FALSE(contains(r.out, "env RANK"));  // nothing ran
}

TEST_CASE("launch: --collective_timeout reaches the workers, a bad value stops the launch", "[launch]") {
  TempDir dir;
  auto given = launch(dir, {"--cpu", "--num_processes", "2", "--collective_timeout", "90", "--dry_run", envWorker()});
  REQUIRE(given.exit_code == 0);
  CHECK(contains(given.out, "  ACCEL_COLLECTIVE_TIMEOUT=90\n"));
  auto unset = launch(dir, {"--cpu", "--num_processes", "2", "--dry_run", envWorker()});
  CHECK_FALSE(contains(unset.out, "ACCEL_COLLECTIVE_TIMEOUT"));  // the runtime's default: 600 s
  auto zero = launch(dir, {"--cpu", "--collective_timeout", "0", "--dry_run", envWorker()});
  CHECK(zero.exit_code == 2);
  CHECK(contains(zero.err, "--collective_timeout: '0' is not a number of seconds above 0"));
  auto bad_env = launch(dir, {"--cpu", "--dry_run", envWorker()}, 0, {{"ACCEL_COLLECTIVE_TIMEOUT", "ten"}});
  CHECK(bad_env.exit_code == 2);
  CHECK(contains(bad_env.err, "ACCEL_COLLECTIVE_TIMEOUT: 'ten' is not a number of seconds above 0"));
  // It is the timeout the ranks wait at: a rank 30 s late fails the others after 2 s, not 600.
  for (const char* shm : {"1", "0"}) {
    auto late = run({accelBinary(), "launch", "-q", "--cpu", "--num_processes", "2", "--main_process_port", "0",
                     "--collective_timeout", "2", accel::test::runtimeWorker(), "straggle", "30"},
                    {}, launchEnv(dir, 0, {{"ACCEL_SHM", shm}, {"GLOO_SOCKET_IFNAME", "lo"}}), 60000);
    INFO("ACCEL_SHM=" << shm << ": " << late.err);
    CHECK(late.exit_code == 3);
    std::smatch m;
    REQUIRE(std::regex_search(late.err, m,
                              std::regex(R"(\[rank 0\] error after ([0-9.]+) s: barrier failed on rank 0 of 2)")));
    CHECK(std::stod(m[1]) >= 1.9);
    CHECK(std::stod(m[1]) < 10);
  }
  // A worker started without the launcher reads the variable itself, and names it when it is bad.
  auto worker = run({accel::test::runtimeWorker(), "helpers", dir.file("h")}, {},
                    launchEnv(dir, 0, {{"ACCEL_COLLECTIVE_TIMEOUT", "-1"}}));
  CHECK(worker.exit_code == 3);
  CHECK(contains(worker.err, "ACCEL_COLLECTIVE_TIMEOUT='-1' is not a number of seconds above 0"));
}

TEST_CASE("launch: a busy port — replaced on one machine, an error across machines", "[launch][port][failure]") {
  TempDir dir;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::listen(fd, 1);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string busy = std::to_string(ntohs(a.sin_port));
  auto single = launch(dir, {"--cpu", "--main_process_port", busy, envWorker()});
  INFO(single.err);
  CHECK(single.exit_code == 0);
  CHECK(contains(single.err, "accel: port " + busy + " is busy (held by pid " + std::to_string(::getpid())));
  CHECK_FALSE(contains(single.out, "MASTER_PORT=" + busy));
  auto multi = launch(dir, {"--cpu", "--num_machines", "2", "--num_processes", "2", "--main_process_ip", "127.0.0.1",
                            "--main_process_port", busy, envWorker()});
  CHECK(multi.exit_code == 1);
  CHECK(contains(multi.err, "accel: error: port " + busy + " on this machine is busy (held by pid"));
  ::close(fd);
}

TEST_CASE("launch: a real PyTorch DDP job on Gloo passes", "[launch][torch]") {
  if (run({"/usr/bin/python3", "-c", "import torch"}).exit_code != 0) {
    WARN("skipped: Debian's python3-torch is not installed for /usr/bin/python3 (scripts/test installs it)");
    return;
  }
  TempDir dir;
  auto r = launch(dir,
                  {"--cpu", "--num_processes", "2", "--main_process_port", "0", "--python", "/usr/bin/python3",
                   ACCEL_SOURCE_DIR "/tests/python/ddp_gloo.py"},
                  0, {{"GLOO_SOCKET_IFNAME", "lo"}});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "[rank 0] ddp_gloo ok world_size=2"));
}

TEST_CASE("launch: enable_cpu_affinity pins each worker to its own share of the CPUs", "[launch][affinity]") {
  TempDir dir;
  const auto cpus = accel::usableCpus();
  REQUIRE_FALSE(cpus.empty());
  const auto shares = accel::splitCpus(cpus, 2);
  auto allowed = [](const std::string& out) {  // rank -> the kernel's Cpus_allowed_list of that worker
    std::map<int, std::string> lists;
    std::regex line(R"(\[rank (\d+)\] Cpus_allowed_list:\s*(\S+))");
    for (std::sregex_iterator it(out.begin(), out.end(), line), end; it != end; ++it)
      lists[std::stoi((*it)[1])] = (*it)[2];
    return lists;
  };
  const std::vector<std::string> grep = {"/bin/grep", "Cpus_allowed_list", "/proc/self/status"};
  std::vector<std::string> args = {"--cpu", "--num_processes",      "2", "--main_process_port",
                                   "0",     "--enable_cpu_affinity"};
  args.insert(args.end(), grep.begin(), grep.end());
  auto r = launch(dir, args);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto lists = allowed(r.out);
  CHECK(lists[0] == accel::cpuListText(shares[0]));
  CHECK(lists[1] == accel::cpuListText(shares[1]));
  // From the config file too (Accelerate's wizard writes the key; its launcher ignores it).
  const std::string config = dir.write(
      "affinity.yaml", "distributed_type: MULTI_CPU\nnum_processes: 2\nuse_cpu: true\nenable_cpu_affinity: true\n");
  args = {"--config_file", config, "--main_process_port", "0"};
  args.insert(args.end(), grep.begin(), grep.end());
  r = launch(dir, args);
  REQUIRE(r.exit_code == 0);
  CHECK(allowed(r.out)[1] == accel::cpuListText(shares[1]));
  // Off (the default): every worker keeps the launcher's whole set.
  args = {"--cpu", "--num_processes", "2", "--main_process_port", "0"};
  args.insert(args.end(), grep.begin(), grep.end());
  r = launch(dir, args);
  REQUIRE(r.exit_code == 0);
  CHECK(allowed(r.out)[0] == accel::cpuListText(cpus));
  CHECK(allowed(r.out)[1] == accel::cpuListText(cpus));
}
