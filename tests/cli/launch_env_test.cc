// SPDX-License-Identifier: Apache-2.0
// `accel launch` through the real binary: what each worker receives (rank, world, rendezvous,
// Accelerate's variables), precedence of flags over config, programs (.py, PATH, missing),
// --dry_run, --collective_timeout, and a real PyTorch DDP job on Gloo (where workers run:
// launch_placement_test.cc).
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <regex>
#include <set>

#include "lib/launch/plan/cpu_affinity.h"
#include "tests/cli/launch_support.h"
#include "tests/support/skip.h"

using namespace accel::test;

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
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.err, "accel: no config file at " + dir.file("hf/accelerate/default_config.yaml") +
                            "; distributed_type=MULTI_CPU (GPU probe: none visible); defaults: num_machines=1, "
                            "mixed_precision=no\n"));
  auto quiet = launch(dir, {"-q", "--num_processes", "2", envWorker()});
  CHECK(quiet.err.empty());
  auto missing = launch(dir, {"--config_file", dir.file("typo.yaml"), envWorker()});
  CHECK(missing.exit_code == 2);
  CHECK(contains(missing.err, "accel: error: " + dir.file("typo.yaml") + ": config file does not exist"));
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
  CHECK(contains(bad_env.err,
                 "ACCEL_COLLECTIVE_TIMEOUT='ten' is not a number of seconds above 0"));  // as the runtime says it
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

TEST_CASE("launch: a real PyTorch DDP job on Gloo passes", "[launch][torch]") {
  if (run({"/usr/bin/python3", "-c", "import torch"}).exit_code != 0) {
    accel::test::skip("Debian's python3-torch is not installed for /usr/bin/python3 (scripts/test installs it)");
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
