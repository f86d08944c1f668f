// SPDX-License-Identifier: Apache-2.0
// What the user asked `accel launch` for on the command line. An empty optional means "not
// given", which is what lets config-file values apply (explicit flag > config > default).
// Plain value type, filled by parseLaunchArgs (lib/launch/settings/launch_args.h) from the flag tables.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace accel::launch::settings {

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
  // "deepspeed_config.zero_stage", "dynamo_config.dynamo_backend", …), typed by the key's schema
  // row as they are parsed (typedFlagValue in launch_args.h).
  std::map<std::string, nlohmann::json> values;
  // The same, from torchrun's PET_<FLAG> variables (below the command line, above the config
  // file): config key -> text.
  std::map<std::string, std::string> env_values;
  // Where a launcher option below came from when not the command line: flag name ("nnodes") ->
  // its variable ("PET_NNODES").
  std::map<std::string, std::string> origins;
  // `accel torchrun` (or a link named torchrun): torchrun's grammar and defaults, no config file.
  bool torchrun = false;
  // torchrun's own settings (torchrun_args.h turns them into config keys and checks them).
  std::optional<std::string> nnodes;          // N or MIN:MAX
  std::optional<std::string> nproc_per_node;  // N, gpu, cpu or auto: processes on this machine
  std::optional<long long> node_rank;
  std::optional<std::string> master_addr;
  std::optional<long long> master_port;
  std::optional<std::string> rdzv_endpoint;  // HOST[:PORT]
  std::optional<std::string> rdzv_id;        // TORCHELASTIC_RUN_ID
  bool standalone = false;
  std::optional<std::string> start_method;
  std::optional<std::string> event_log_handler;
  bool run_path = false;
  std::optional<std::string> redirects;  // torchrun's -r: streams kept off the console
  std::optional<std::string> duplicate_stdout_filters;
  std::optional<std::string> duplicate_stderr_filters;
  std::optional<std::string> local_addr;
  std::optional<std::string> logs_specs;
  std::optional<std::string> numa_binding;
  // DeepSpeed's launcher conventions (what `accel deepspeed` launches; deepspeed_launch.h).
  bool deepspeed_env = false;   // DeepSpeed's worker variables instead of torchrun's and Accelerate's
  bool local_rank_arg = false;  // --local_rank=N after the script
  bool bind_cores_to_rank = false;
  std::optional<std::string> bind_core_list;
  std::optional<std::string> enable_each_rank_log;  // DIR: each rank's output in DIR/<time>_rank<R>.log only
  std::optional<std::string> launcher_args;         // more words for mpirun / srun
  std::optional<std::string> venv_script;           // sourced on each host before its launcher
  std::optional<long long> shutdown_timeout;
  bool virtual_local_rank = false;
  std::optional<std::string> print_completion;
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
  std::optional<long long> job_port;           // the launchers' job channel on machine 0
  std::optional<double> heartbeat_timeout;     // seconds of silence before a machine is lost
  std::optional<double> collective_timeout;    // seconds a worker's collective may wait for its peers
  std::optional<double> hang_timeout;          // seconds without progress anywhere before the job stops
  std::optional<std::string> flight_recorder;  // on | off: the ranks' flight recorders, accel's and torch's
  std::optional<long long> straggler_window;
  std::optional<double> straggler_share;
  std::optional<double> straggler_lateness;
  // Watching the job (watch_settings.h).
  std::optional<std::string> event_log;     // a file, or fd:N
  std::optional<long long> metrics_port;    // Prometheus' /metrics
  std::optional<std::string> metrics_addr;  // the address it is served on
  std::optional<double> metrics_linger;     // seconds /metrics is served after the job ends
  // The restart policy (job/restart_policy.h).
  std::optional<std::string> on_hang;  // restart | end
  std::optional<double> startup_timeout;
  std::optional<long long> max_startup_failures;
  std::optional<long long> max_machine_failures;
  std::optional<double> gpu_free_timeout;
  std::optional<long long> max_no_progress_restarts;
  std::vector<std::string> env;    // --env KEY=VALUE, repeatable: set in every worker's environment
  std::optional<std::string> pty;  // auto, on, off: pseudo-terminals for the workers' streams
  // Several machines from one command (lib/launch/fleet): DeepSpeed's hostfile (the config key
  // deepspeed_hostfile's flag is --deepspeed_hostfile), its --include/--exclude filters (the
  // config's deepspeed_inclusion_filter/deepspeed_exclusion_filter), its limits, and ssh's port
  // and extra options.
  std::optional<std::string> hostfile;
  std::optional<std::string> include;
  std::optional<std::string> exclude;
  std::optional<long long> num_nodes;
  std::optional<long long> num_gpus;
  std::optional<long long> ssh_port;
  std::optional<std::string> ssh_args;
  std::optional<std::string> stdin_rank;  // the rank that takes the user's input, or none
  bool module = false;
  bool no_python = false;
  bool quiet = false;
  bool dry_run = false;
  bool help = false;  // -h/--help: print launchHelp() and start nothing
  // The program and its arguments: everything from the first word that is not a launcher option.
  std::vector<std::string> command;
  // Every word as typed after `accel launch` (a hostfile head or srun passes them on).
  std::vector<std::string> words;
};

}  // namespace accel::launch::settings
