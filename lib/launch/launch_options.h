// SPDX-License-Identifier: Apache-2.0
// What the user asked `accel launch` for on the command line. An empty optional means "not
// given", which is what lets config-file values apply (explicit flag > config > default).
// Plain value type, filled by parseLaunchArgs (lib/launch/launch_args.h) from the flag tables.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace accel {

struct LaunchOptions {
  std::string config_file;  // empty: Accelerate's default location (skipped with --cpu)
  // Hardware / paradigm selection (at most one).
  bool cpu = false;
  bool multi_gpu = false;
  bool use_deepspeed = false;
  bool use_fsdp = false;
  bool use_megatron_lm = false;
  bool tpu = false;
  bool use_parallelism_config = false;  // export parallelism_config (FSDP2 N-D parallelism)
  // Values that also exist as config keys, by config key name ("num_processes",
  // "deepspeed_config.zero_stage", "dynamo_config.dynamo_backend", …), as typed on the command
  // line; converted by the schema.
  std::map<std::string, std::string> values;
  // Launcher-only settings.
  std::optional<long long> num_cpu_threads_per_process;
  std::optional<long long> max_restarts;
  std::optional<double> monitor_interval;
  std::optional<double> grace_period;
  std::optional<std::string> tee;
  std::optional<std::string> log_dir;
  std::optional<std::string> log_line_prefix_template;  // torchrun's string.Template for console lines
  std::optional<std::string> role;
  std::optional<std::string> local_ranks_filter;
  std::optional<std::string> python;
  std::optional<std::string> rdzv_token;
  std::optional<std::string> rdzv_conf;
  // torchrun's comma-separated signal names (TORCHELASTIC_SIGNALS_TO_HANDLE).
  std::optional<std::string> signals_to_handle;
  std::optional<long long> job_port;         // the launchers' job channel on machine 0
  std::optional<double> heartbeat_timeout;   // seconds of silence before a machine is lost
  std::optional<double> collective_timeout;  // seconds a worker's collective may wait for its peers
  std::vector<std::string> env;              // --env KEY=VALUE, repeatable: set in every worker's environment
  std::optional<std::string> pty;            // auto, on, off: pseudo-terminals for the workers' streams
  std::optional<std::string> stdin_rank;     // the rank that takes the user's input, or none
  bool module = false;
  bool no_python = false;
  bool quiet = false;
  bool dry_run = false;
  bool help = false;  // -h/--help: print launchHelp() and start nothing
  // The program and its arguments: everything from the first word that is not a launcher option.
  std::vector<std::string> command;
};

}  // namespace accel
