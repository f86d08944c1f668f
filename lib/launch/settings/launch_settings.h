// SPDX-License-Identifier: Apache-2.0
// Every setting of a launch, typed, each with its origin (origin.h), resolved from the sources in
// one pass: the command line (Accelerate's grammar or torchrun's), torchrun's PET_* variables, a
// Kubernetes pod's or SLURM's placement, a hostfile head's orders, the config file, the
// launcher's ACCEL_* variables, this machine's facts, the defaults. Which source wins for each
// setting is said where it is resolved: placement_settings.h (where this machine sits),
// job_settings.h (the job channel), terminal_settings.h, host_launch.h (a hostfile's machines),
// and launch_settings.cc (the paradigm, the config keys, the launcher's options).
// Resolution reads the facts, never the system; it throws UsageError or ConfigError naming the
// value, where it came from and a fix. The plan (lib/launch/plan) is built from the result.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/config/config.h"
#include "lib/config/schema.h"
#include "lib/launch/etcd/etcd_place.h"
#include "lib/launch/facts/facts.h"
#include "lib/launch/facts/program.h"
#include "lib/launch/settings/head_place.h"
#include "lib/launch/settings/host_launch.h"
#include "lib/launch/settings/key_values.h"
#include "lib/launch/settings/launch_options.h"
#include "lib/launch/settings/pod_convention.h"
#include "lib/launch/settings/rdzv_conf.h"
#include "lib/launch/settings/slurm.h"

namespace accel::launch::settings {

// How the processes share the work (Accelerate's distributed_type and what follows from it).
struct Paradigm {
  Setting<std::string> distributed_type;  // NO, MULTI_CPU, MULTI_GPU, DEEPSPEED, FSDP, MEGATRON_LM
  Setting<bool> use_cpu;
  Setting<bool> use_parallelism_config;
  bool gpus() const;  // its workers use GPUs
};

// Where this machine sits in the job and how many processes it runs (placement_settings.h).
struct Placement {
  Setting<long long> num_machines;  // with --nnodes MIN:MAX, MAX
  Setting<long long> min_machines;  // MIN; num_machines where membership is static
  Setting<long long> machine_rank;  // -1: given out by machine 0 as machines join (join_order)
  bool join_order = false;
  // A c10d-style rendezvous (an endpoint, no node rank): machine 0 (the endpoint's machine) gives
  // out the other machines' ranks in every round, a round runs MIN to MAX machines, and machines
  // beyond MAX wait as spares.
  bool dynamic = false;
  Setting<std::string> main_process_ip;  // machine 0's address as the sources say it
  Setting<long long> main_process_port;  // 0: a free one (one machine only)
  Setting<long long> nproc_per_node;     // this machine's processes
  Setting<long long> num_processes;      // every machine's, as far as this machine knows
  bool world_at_join = false;            // machine 0 settles the world from every machine's count
  // --rdzv_backend etcd: the machines meet in etcd, which elects the one that decides for the job
  // (machine 0) in every round; membership is dynamic, as with an endpoint.
  std::optional<etcd::EtcdPlace> etcd;
  std::optional<RdzvConf> rdzv_conf;  // torchrun's --rdzv_conf, read once
  Origin rdzv_conf_origin;
  std::optional<PodConvention> pod;
  std::optional<SlurmInfo> slurm;
};

// How the launcher runs and stops the workers.
struct Supervision {
  Setting<int> max_restarts;
  // The restart policy (job/restart_policy.h).
  Setting<bool> restart_hangs;  // --on_hang restart
  Setting<double> startup_timeout;
  Setting<int> max_startup_failures;
  Setting<int> max_machine_failures;
  Setting<int> max_no_progress_restarts;
  Setting<double> gpu_free_timeout;  // before a round on GPUs: how long the last one's processes may hold memory
  Setting<double> grace_period;
  Setting<std::string> role;
  Setting<std::string> signals_to_handle;
  std::vector<std::string> env;                   // --env KEY=VALUE, in order
  Setting<std::optional<long long>> cpu_threads;  // OMP_NUM_THREADS per worker; none: the workers' own
  // The workers' CPUs and memory node (plan/numa_binding.h): --numa-binding's mode, or "node" from
  // enable_cpu_affinity on a GPU job (Accelerate's affinity is its GPU's node); none: unbound.
  Setting<std::optional<std::string>> numa_binding;
  // DeepSpeed's conventions (--deepspeed_env, --local_rank_arg), and --bind_cores_to_rank's
  // core list ("" for the physical cores; none without it).
  Setting<bool> deepspeed_env;
  Setting<bool> local_rank_arg;
  Setting<std::optional<std::string>> bind_cores;
};

enum class Pty { Auto, On, Off };

// Where the workers' output goes (terminal_settings.h, line_prefix.h and the launcher's options).
struct Output {
  Setting<std::string> tee;  // torchrun's Std encoding
  Setting<std::optional<std::string>> redirects;
  Setting<std::optional<std::string>> log_dir;
  Setting<std::optional<std::string>> each_rank_log;  // DeepSpeed's layout: DIR/<time>_rank<R>.log, both streams
  Setting<std::optional<std::string>> local_ranks_filter;
  // torchrun's --duplicate_stdout_filters and --duplicate_stderr_filters (its comma list, ",," a comma).
  Setting<std::optional<std::string>> copy_filters[2];
  Setting<std::optional<std::string>> line_prefix_template;
  Setting<Pty> pty;
  Setting<int> stdin_rank;  // -1: none
  Setting<double> progress_interval;
};

// The launchers' job channel and the timeouts that end a job (job_settings.h).
struct JobChannel {
  Setting<int> job_port;  // 0: picked with the store's port
  Setting<double> heartbeat_timeout;
  Setting<double> join_timeout;
  Setting<double> last_call_timeout;  // elastic: after MIN machines joined, how long a round waits for more
  Setting<double> collective_timeout;
  Setting<double> hang_timeout;    // 0: off
  Setting<double> stacks_timeout;  // 0: no stacks before a stop
  Setting<int> flight_entries;     // each rank's flight recorder (launch_env.h kFlightEntries); 0: off
  // Who the others wait for (flight/straggler_watch.h): the collectives judged (0: no watch), the
  // share of them a straggler came last to, and by how many seconds at least.
  Setting<int> straggler_window;
  Setting<double> straggler_share;
  Setting<double> straggler_lateness;
  Setting<double> clock_skew;  // tests only (variables.h kTestClockSkew)
};

// How the job is watched while it runs (watch_settings.h).
struct Watching {
  Setting<std::optional<std::string>> event_log;  // a file, or "fd:N"
  Setting<bool> console_events;                   // torchrun's --event-log-handler console
  Setting<int> metrics_port;                      // 0: no /metrics
  Setting<std::optional<std::string>> metrics_addr;
  Setting<double> metrics_linger;
};

// Who the job is: the same on every machine.
struct Identity {
  Setting<std::optional<std::string>> run_id;  // --rdzv_id / TORCHELASTIC_RUN_ID
  Setting<std::optional<std::string>> token;   // --rdzv_token (never shown)
};

// torchrun's own settings.
struct Torchrun {
  Setting<bool> grammar;  // `accel torchrun`: torchrun's grammar and defaults
  Setting<std::optional<std::string>> local_addr;
  Setting<bool> virtual_local_rank;
};

struct LaunchSettings {
  Paradigm paradigm;
  Placement placement;
  Supervision supervision;
  Output output;
  JobChannel channel;
  Watching watching;
  Identity identity;
  Torchrun torchrun;
  Hosts hosts;                         // a hostfile's machines, started from here (host_launch.h)
  KeyValues keys;                      // the config schema's keys the launch uses
  std::vector<std::string> command;    // the program and its arguments, as typed
  std::vector<std::string> words;      // every word after `accel launch`, as typed
  facts::ProgramOptions program_form;  // how the command runs (-m, --no_python, --python)
  bool dry_run = false;
  bool quiet = false;
  bool from_head = false;                  // a hostfile head started this launcher
  std::optional<std::string> config_path;  // the file read, if any
  std::string config_line;                 // one line: which config file, or which defaults
  std::vector<std::string> notes;          // SLURM detection, ignored keys, …
};

// `config`: the loaded file (nullopt when none was read; `config_path_looked_at` says where).
// `place`: a hostfile head's orders for this machine (fleet/head_orders.h), or null.
LaunchSettings resolveLaunchSettings(const LaunchOptions& options, const std::optional<Config>& config,
                                     const std::string& config_path_looked_at, const facts::Facts& facts,
                                     const HeadPlace* place = nullptr);

// Whether settings under `when` apply to this launch: paradigm settings only under their
// paradigm (their launch defaults and their worker variables), FP8 ones with mixed_precision fp8.
bool exportApplies(ExportWhen when, const LaunchSettings& s);

// True for distributed types whose workers use GPUs.
bool isGpuType(const std::string& distributed_type);

// Every setting as `accel launch --debug` lists it: name, value as text, origin.
struct SettingRow {
  std::string name, value, origin;
};
std::vector<SettingRow> settingRows(const LaunchSettings& s);

}  // namespace accel::launch::settings
