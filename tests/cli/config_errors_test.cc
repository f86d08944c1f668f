// SPDX-License-Identifier: Apache-2.0
// Bad config input through the real binary: each problem is named with file:line:column and a
// fix, the exit code is 2, and no existing file is changed.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "tests/support/process.h"

using accel::test::accelBinary;
using accel::test::run;
using accel::test::slurp;
using accel::test::TempDir;

namespace {

const std::string kGood =
    "compute_environment: LOCAL_MACHINE\n"
    "distributed_type: MULTI_GPU\n"
    "mixed_precision: bf16\n"
    "num_machines: 1\n"
    "num_processes: 4\n";

std::vector<std::string> configCommand(const char* command, const std::string& path) {
  std::vector<std::string> argv = {accelBinary(), "config", command};
  if (std::string(command) != "validate") argv.push_back("--config_file");
  argv.push_back(path);
  return argv;
}

std::vector<std::string> launchWith(const std::string& path) {
  return {accelBinary(), "launch", "--config_file", path, "--no_python", "true"};
}

// A file Accelerate's loader refuses too: `accel config validate`, `update` and `show` must fail
// with exit 2 and every `expected` fragment on stderr, and the file must be unchanged.
void expectRejected(const std::string& text, const std::vector<std::string>& expected) {
  TempDir dir;
  std::string path = dir.write("bad.yaml", text);
  for (const char* command : {"validate", "update", "show"}) {
    auto r = run(configCommand(command, path), {}, {{"HF_HOME", dir.file("hf")}});
    INFO(command << "\n" << r.err);
    CHECK(r.exit_code == 2);
    for (const auto& fragment : expected) CHECK(r.err.find(fragment) != std::string::npos);
    CHECK(r.err.find("accel: error: " + path) != std::string::npos);
    CHECK(slurp(path) == text);
  }
}

// A file Accelerate reads but whose values no launch can use: `show` reads it with a warning
// per value, `validate` and `launch` refuse it (exit 2), each naming every `expected` fragment.
void expectUnusable(const std::string& text, const std::vector<std::string>& expected) {
  TempDir dir;
  std::string path = dir.write("bad.yaml", text);
  auto shown = run(configCommand("show", path), {}, {{"HF_HOME", dir.file("hf")}});
  INFO("show\n" << shown.err);
  CHECK(shown.exit_code == 0);
  CHECK(shown.err.find("accel: warning: " + path) != std::string::npos);
  CHECK(shown.err.find("no launch can use this value: accel launch refuses it") != std::string::npos);
  for (const auto& argv : {configCommand("validate", path), launchWith(path)}) {
    auto r = run(argv, {}, {{"HF_HOME", dir.file("hf")}});
    INFO(argv[1] << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("accel: error: " + path) != std::string::npos);
    for (const auto& fragment : expected) CHECK(r.err.find(fragment) != std::string::npos);
  }
  CHECK(slurp(path) == text);
}

// A file that works, with something odd in it: every command takes it and warns.
void expectWarned(const std::string& text, const std::vector<std::string>& expected) {
  TempDir dir;
  std::string path = dir.write("odd.yaml", text);
  for (const char* command : {"validate", "show"}) {
    auto r = run(configCommand(command, path), {}, {{"HF_HOME", dir.file("hf")}});
    INFO(command << "\n" << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("accel: warning: " + path) != std::string::npos);
    for (const auto& fragment : expected) CHECK(r.err.find(fragment) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("config errors: unknown key gets file:line:column and did-you-mean", "[config][errors]") {
  expectRejected(kGood + "num_proccesses: 3\n",
                 {"bad.yaml:6:1: unknown key 'num_proccesses'", "accel: hint: did you mean 'num_processes'?"});
}

TEST_CASE("config errors: a nested key Accelerate does not read is kept with a warning", "[config][errors]") {
  expectWarned(
      kGood + "deepspeed_config:\n  zero_stag: 2\n",
      {"odd.yaml:7:3: 'zero_stag' is not a key of deepspeed_config that Accelerate 1.15 reads: kept, and ignored",
       "did you mean 'zero_stage'?"});
}

TEST_CASE("config errors: wrong value lists the allowed values", "[config][errors]") {
  expectRejected("distributed_type: MULTI_GPUS\nnum_processes: 2\n",
                 {"bad.yaml:1:19: 'MULTI_GPUS' is not a valid value for distributed_type", "did you mean 'MULTI_GPU'?",
                  "allowed values: NO, MULTI_CPU, MULTI_GPU"});
}

TEST_CASE("config errors: wrong type", "[config][errors]") {
  expectUnusable("distributed_type: MULTI_CPU\nnum_processes: four\n",
                 {"bad.yaml:2:16: num_processes must be an integer >= 1, got 'four'"});
  expectUnusable(
      "distributed_type: 'NO'\nuse_cpu: 'false'\n",
      {"bad.yaml:2:10: use_cpu must be true or false", "remove the quotes: Accelerate reads any quoted text as true"});
  expectUnusable("distributed_type: MULTI_CPU\nnum_processes: 99999999999999999999\n",
                 {"bad.yaml:2:16: num_processes: '99999999999999999999' is out of range: it must be from 1 to"});
  expectUnusable("distributed_type: 'NO'\nmain_process_port: 70000\n",
                 {"main_process_port is 70000, but it must be an integer from 0 to 65535"});
  expectUnusable(
      "distributed_type: 'NO'\nfsdp_config:\n  fsdp_min_num_params: 1e8\n",
      {"bad.yaml:3:24: fsdp_config.fsdp_min_num_params must be an integer", "write it as a plain integer: 100000000"});
}

TEST_CASE("config errors: MULTI_GPU with one process on one machine", "[config][errors]") {
  expectUnusable("distributed_type: MULTI_GPU\nnum_processes: 1\n",
                 {"bad.yaml:2:1: distributed_type MULTI_GPU (line 1) needs at least 2 processes",
                  "use distributed_type: 'NO' for a single GPU"});
}

TEST_CASE("config errors: gpu_ids lists fewer GPUs than processes", "[config][errors]") {
  expectUnusable("distributed_type: MULTI_GPU\ngpu_ids: 0,1\nnum_processes: 4\n",
                 {"bad.yaml:2:1: gpu_ids lists 2 GPU(s) but num_processes (line 3) asks for 4 "
                  "process(es) per machine"});
}

TEST_CASE("config errors: machine_rank not below num_machines", "[config][errors]") {
  expectUnusable(
      "distributed_type: MULTI_GPU\nmachine_rank: 2\nmain_process_ip: h\nnum_machines: 2\n"
      "num_processes: 4\n",
      {"bad.yaml:2:1: machine_rank 2 must be less than num_machines 2 (line 4)", "machine ranks run from 0 to 1"});
}

TEST_CASE("config errors: num_processes not divisible by num_machines", "[config][errors]") {
  expectUnusable("distributed_type: MULTI_GPU\nmain_process_ip: h\nnum_machines: 2\nnum_processes: 3\n",
                 {"bad.yaml:4:1: num_processes 3 is not divisible by num_machines 2 (line 3)"});
}

TEST_CASE("config errors: several machines without main_process_ip", "[config][errors]") {
  expectUnusable("distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: 4\n",
                 {"bad.yaml:2:1: num_machines is 2 but main_process_ip is not set",
                  "set main_process_ip to the address of the machine with machine_rank 0"});
}

TEST_CASE("config errors: YAML syntax error has line:column", "[config][errors]") {
  expectRejected("distributed_type: 'NO'\nfsdp_config:\n  a: [1, 2\n", {"bad.yaml:", "invalid YAML"});
}

TEST_CASE("config errors: a key given twice is a warning, and the last one counts, as in Accelerate",
          "[config][errors]") {
  expectWarned("distributed_type: 'NO'\ndistributed_type: MULTI_CPU\nnum_processes: 2\n",
               {"odd.yaml:2:1: 'distributed_type' is given twice, at lines 1 and 2: the last one counts"});
  TempDir dir;
  auto r = run(configCommand("show", dir.write("twice.yaml",
                                               "distributed_type: 'NO'\ndistributed_type: MULTI_CPU\n"
                                               "num_processes: 2\n")));
  CHECK(r.out.find("distributed_type        MULTI_CPU") != std::string::npos);
}

TEST_CASE("config errors: what fuzzing found is an error with a position, not a crash", "[config][errors]") {
  // A value that contains itself through an alias (once a stack overflow).
  expectRejected("distributed_type: MULTI_CPU\nnum_processes: 2\ntpu_env: &a [*a]\n",
                 {"bad.yaml:", "an alias that contains itself"});
  // Aliases of aliases ("billion laughs"; once minutes and gigabytes).
  std::string bomb = "distributed_type: MULTI_CPU\nnum_processes: 2\nl0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    bomb += fmt::format("l{}: &l{} [*l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}, *l{p}]\n", i, i,
                        fmt::arg("p", i - 1));
  }
  bomb += "tpu_env: [*l8, *l8]\n";  // tpu_env: a list of any values (10^9 of them here)
  expectRejected(bomb, {"bad.yaml:", "expands to more values than the file has characters"});
  // A long text repeated by aliases (gigabytes of copies from a file of 1 MB).
  std::string repeated =
      "distributed_type: MULTI_CPU\nnum_processes: 2\ntpu_env: [&x \"" + std::string(200000, 'a') + "\"";
  for (int i = 0; i < 50000; ++i) repeated += ", *x";
  expectRejected(repeated + "]\n", {"bad.yaml:", "a long text repeated"});
  // Bytes that are not UTF-8 (yaml-cpp reads them, PyYAML refuses them).
  expectRejected("distributed_type: MULTI_CPU\nnum_processes: 2\nmain_training_function: ma\xffin\n",
                 {"bad.yaml:3:", "save the file as UTF-8 text"});
}

TEST_CASE("config errors: missing distributed_type and empty file", "[config][errors]") {
  expectRejected("num_processes: 2\n", {"distributed_type is required"});
  expectRejected("", {"the file is empty"});
  expectRejected("- a\n- b\n", {"expected a map of keys at the top level"});
}

TEST_CASE("config errors: every problem is reported in one run", "[config][errors]") {
  expectRejected("distributed_type: 'NO'\nfoo: 1\nmixed_precision: fp32\nuse_cpu: maybe\n",
                 {"bad.yaml:2:1: unknown key 'foo'", "bad.yaml:3:18: 'fp32' is not a valid",
                  "bad.yaml:4:10: use_cpu must be true or false"});
}

TEST_CASE("config errors: --config_file that does not exist never falls back", "[config][errors]") {
  TempDir dir;
  // A valid default file exists; the misspelled explicit path must still be an error.
  dir.write("hf/accelerate/default_config.yaml", "distributed_type: 'NO'\n");
  for (const char* command : {"show", "update"}) {
    auto r = run({accelBinary(), "config", command, "--config_file", dir.file("typo.yaml")}, {},
                 {{"HF_HOME", dir.file("hf")}});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("accel: error: " + dir.file("typo.yaml") + ": config file does not exist") != std::string::npos);
    CHECK_FALSE(accel::test::slurp(dir.file("typo.yaml")).size());
  }
  auto v = run({accelBinary(), "config", "validate", dir.file("typo.yaml")});
  CHECK(v.exit_code == 2);
  CHECK(v.err.find("config file does not exist") != std::string::npos);
}

TEST_CASE("config errors: validate reports each file", "[config][errors]") {
  TempDir dir;
  std::string good = dir.write("good.yaml", kGood);
  std::string bad = dir.write("bad.yaml", "distributed_type: MULTI_GPU\nnum_processes: 1\n");
  auto r = run({accelBinary(), "config", "validate", good, bad});
  CHECK(r.exit_code == 2);
  CHECK(r.out.find(good + ": ok") != std::string::npos);
  CHECK(r.err.find(bad + ":2:1:") != std::string::npos);
  auto ok = run({accelBinary(), "config", "validate", good});
  CHECK(ok.exit_code == 0);
}
