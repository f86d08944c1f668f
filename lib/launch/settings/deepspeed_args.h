// SPDX-License-Identifier: Apache-2.0
// `accel deepspeed` (or a link named deepspeed): DeepSpeed 0.19's launcher command line, as
// deepspeed.launcher.runner.parse_args takes it (argparse with its default allow_abbrev: a
// unique prefix of a long option works; -H, -i, -e, -q; the first word that is not an option
// starts the user's script, whose arguments are its own). Every flag of that parser has a row
// here (tests/compat/deepspeed_0_19_launcher_flags.txt lists them); deepspeed_launch.h says what
// each does under accel.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel::launch::settings {

struct DeepSpeedArgs {
  std::optional<std::string> hostfile;  // -H; DeepSpeed's default /job/hostfile when unset
  std::string include, exclude;         // -i, -e: NAME[:SLOT[,SLOT…]][@…]
  long long num_nodes = -1, num_gpus = -1;
  long long master_port = 29500;
  std::string master_addr;
  long long node_rank = -1;
  std::string launcher = "pdsh";
  std::string launcher_args;
  bool module = false, no_python = false, no_local_rank = false, no_ssh = false, no_ssh_check = false;
  bool force_multi = false, save_pid = false;
  std::string enable_each_rank_log = "None";  // DeepSpeed's default is this text
  std::string autotuning;                     // "", tune, run
  bool bind_cores_to_rank = false;
  std::optional<std::string> bind_core_list;
  std::optional<long long> ssh_port;
  std::optional<std::string> venv_script;
  std::string log_level = "info";
  bool quiet = false;
  bool help = false;
  std::vector<std::string> command;  // user_script, then user_args
};

// Throws UsageError naming the word, as argparse refuses it (unknown, ambiguous, missing value,
// not an integer, no script).
DeepSpeedArgs parseDeepSpeedArgs(const std::vector<std::string>& words);

// The long flags of the table (without "--", underscore spelling), for the flag-list test.
std::vector<std::string> deepSpeedFlagNames();

// `deepspeed --help`.
std::string deepSpeedHelp();

}  // namespace accel::launch::settings
