// SPDX-License-Identifier: Apache-2.0
// `accel deepspeed`: DeepSpeed 0.19's launcher grammar (lib/launch/settings/deepspeed_args.h) and
// what each command line becomes (deepspeed_launch.h). Against the real launcher:
// tests/peers/check_deepspeed_parity.py.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/settings/deepspeed_args.h"
#include "lib/launch/settings/deepspeed_launch.h"

using namespace accel::launch::settings;
using accel::UsageError;

namespace {

DeepSpeedMachine machine(int gpus, std::map<std::string, std::string> env = {}, std::string hostfile = "") {
  DeepSpeedMachine m;
  m.env = std::move(env);
  m.gpus = gpus;
  m.exists = [hostfile](const std::string& path) { return !hostfile.empty() && path == hostfile; };
  return m;
}

std::string wordsOf(const std::vector<std::string>& args, const DeepSpeedMachine& m) {
  return accel::join(deepSpeedLaunch(parseDeepSpeedArgs(args), m, 42).words, " ");
}

}  // namespace

TEST_CASE("deepspeed args: the flag list is DeepSpeed 0.19's, no more, no less", "[deepspeed]") {
  std::ifstream in(std::string(ACCEL_SOURCE_DIR) + "/tests/compat/deepspeed_0_19_launcher_flags.txt");
  std::set<std::string> listed;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') listed.insert(accel::trim(line));
  }
  const auto ours = deepSpeedFlagNames();
  CHECK(listed == std::set<std::string>(ours.begin(), ours.end()));
  CHECK(listed.size() == 25);
}

TEST_CASE("deepspeed args: argparse's ways, as DeepSpeed's runner takes them", "[deepspeed]") {
  auto a = parseDeepSpeedArgs(
      {"--num_g", "2", "-Hhosts", "-qi", "w1:0", "--master_port=29700", "train.py", "--deepspeed", "--num_gpus", "9"});
  CHECK(a.num_gpus == 2);
  CHECK(a.hostfile == "hosts");
  CHECK(a.quiet);
  CHECK(a.include == "w1:0");
  CHECK(a.master_port == 29700);
  CHECK(a.command == std::vector<std::string>{"train.py", "--deepspeed", "--num_gpus", "9"});  // the script's
  CHECK(parseDeepSpeedArgs({"--num_accelerators", "4", "t.py"}).num_gpus == 4);
  CHECK(parseDeepSpeedArgs({"--launcher_args", "-x Y", "t.py"}).launcher_args == "-x Y");  // a space: a value
  CHECK(parseDeepSpeedArgs({"--", "t.py", "--x"}).command == std::vector<std::string>{"t.py", "--x"});
  CHECK(parseDeepSpeedArgs({"--help"}).help);
  CHECK_THROWS_WITH(parseDeepSpeedArgs({"--master", "1", "t.py"}),
                    "ambiguous option: --master could match --master_port, --master_addr");
  CHECK_THROWS_WITH(parseDeepSpeedArgs({"--num_gpus", "two", "t.py"}), "argument --num_gpus: invalid int value: 'two'");
  CHECK_THROWS_WITH(parseDeepSpeedArgs({"--elastic_training", "t.py"}), "unrecognized arguments: --elastic_training");
  CHECK_THROWS_WITH(parseDeepSpeedArgs({"--autotuning", "fast", "t.py"}),
                    "argument --autotuning: invalid choice: 'fast' (choose from 'tune', 'run')");
  CHECK_THROWS_WITH(parseDeepSpeedArgs({"--num_gpus", "2"}),
                    "the following arguments are required: user_script, user_args");
  CHECK_THROWS_WITH(parseDeepSpeedArgs({"--hostfile", "--num_gpus", "t.py"}),
                    "argument --hostfile: expected one argument");
}

TEST_CASE("deepspeed launch: one machine, as runner.py and launch.py run it", "[deepspeed]") {
  // No hostfile: this machine's GPUs, at 127.0.0.1 whatever --master_addr says.
  CHECK(wordsOf({"--master_addr", "10.0.0.9", "t.py", "--x"}, machine(4)) ==
        "--num_machines 1 --num_processes 4 --gpu_ids 0,1,2,3 --main_process_ip 127.0.0.1 --main_process_port 29500 "
        "--deepspeed_env --local_rank_arg -- t.py --x");
  // --num_gpus: that many slots whatever the count (no GPU: the CPU accelerator's one device).
  CHECK(wordsOf({"--num_gpus", "2", "--no_local_rank", "--module", "-q", "pkg.t"}, machine(0)) ==
        "--num_machines 1 --num_processes 2 --gpu_ids 0,1 --main_process_ip 127.0.0.1 --main_process_port 29500 "
        "--deepspeed_env --module --quiet -- pkg.t");
  CHECK(wordsOf({"t.py"}, machine(0)).find("--num_processes 1 --gpu_ids 0 ") != std::string::npos);
  // CUDA_VISIBLE_DEVICES becomes --include, as DeepSpeed turns it.
  auto cvd = deepSpeedLaunch(parseDeepSpeedArgs({"t.py"}), machine(2, {{"CUDA_VISIBLE_DEVICES", "1"}}), 42);
  CHECK(accel::join(cvd.words, " ").find("--num_processes 1 --gpu_ids 1 ") != std::string::npos);
  CHECK(cvd.notes == std::vector<std::string>{"CUDA_VISIBLE_DEVICES=1: --include=localhost:1, as DeepSpeed sets it"});
}

TEST_CASE("deepspeed launch: hostfiles, --no_ssh, several hosts, and what DeepSpeed refuses", "[deepspeed]") {
  const std::string dir = std::string(ACCEL_SOURCE_DIR) + "/tests/docs/fixtures/";
  const std::string file = dir + "hostfile";
  auto m = machine(0, {}, file);
  const auto words = wordsOf({"-H", file, "--no_ssh", "--node_rank", "1", "--master_addr", "10.0.0.1", "t.py"}, m);
  CHECK(words.find("--nnodes 2 --node_rank 1 --nproc_per_node 2 --gpu_ids 0,1 ") == 0);
  CHECK(words.find("--master_addr 10.0.0.1 --master_port 29500") != std::string::npos);
  CHECK_THROWS_WITH(wordsOf({"-H", file, "--no_ssh", "t.py"}, m),
                    "Launching training without ssh, but --node_rank is not set correctly.");
  CHECK_THROWS_WITH(wordsOf({"--num_gpus", "2", "--include", "localhost:0", "t.py"}, machine(2)),
                    "Cannot specify num_nodes/gpus with include/exclude");
  CHECK_THROWS_WITH(wordsOf({"--num_nodes", "2", "t.py"}, machine(2)),
                    "Num nodes is >1 but no extra nodes available via hostfile");
  CHECK_THROWS_WITH(wordsOf({"--autotuning", "tune", "t.py"}, machine(2)),
                    "--autotuning tune: accel does not run DeepSpeed's autotuner");
  CHECK_THROWS_WITH(wordsOf({"--module", "--no_python", "t.py"}, machine(2)),
                    "Don't use both the '--no_python' flag and the '--module' flag at the same time.");
  // One host selected (and not --force_multi): it runs here, at the host's name without --master_addr.
  CHECK(wordsOf({"-H", file, "-i", "node2:1", "t.py"}, m)
            .find("--num_processes 1 --gpu_ids 1 --main_process_ip node2 ") != std::string::npos);
  // --force_multi, or several hosts: started from here by the launcher DeepSpeed would use.
  const auto multi = wordsOf(
      {"-H", file, "--force_multi", "--launcher", "OpenMPI", "--launcher_args", "-x Y", "--save_pid", "t.py"}, m);
  CHECK(multi.find("--use_deepspeed --deepspeed_multinode_launcher openmpi --hostfile " + file) == 0);
  CHECK(multi.find("--launcher_args -x Y") != std::string::npos);
  CHECK(deepSpeedLaunch(parseDeepSpeedArgs({"--save_pid", "t.py"}), machine(1), 42).save_pid_file ==
        "/tmp/42.deepspeed");
}
