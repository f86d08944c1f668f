// SPDX-License-Identifier: Apache-2.0
// The launcher's own flags: Accelerate 1.15's non-config launch flags, torchrun's that Accelerate
// passes through, torchrun's --signals_to_handle, and accel's (--grace_period, --local_ranks_filter, --python,
// --rdzv_token,
// --dry_run). Help texts say what accel does with each.
#include "lib/launch/launcher_flag_table.h"

namespace accel {

namespace {

using O = LaunchOptions;
constexpr std::string_view kHardware = "Hardware and paradigm (one at most)";
constexpr std::string_view kLauncher = kLauncherGroup;
constexpr std::string_view kElsewhere = "TPU and SageMaker (not launched by accel)";

std::vector<LauncherFlag> build() {
  return {
      {"config_file", "", &O::config_file, kLauncher, "config file (default: the Accelerate default; --cpu skips it)"},
      {"cpu", "", &O::cpu, kHardware, "run CPU workers even when GPUs are present"},
      {"multi_gpu", "", &O::multi_gpu, kHardware, "distributed GPU training (DDP)"},
      {"use_deepspeed", "", &O::use_deepspeed, kHardware, "DeepSpeed (exports Accelerate's ACCELERATE_DEEPSPEED_*)"},
      {"use_fsdp", "", &O::use_fsdp, kHardware, "FSDP (exports Accelerate's FSDP_*)"},
      {"use_megatron_lm", "", &O::use_megatron_lm, kHardware, "Megatron-LM (exports MEGATRON_LM_*)"},
      {"tpu", "", &O::tpu, kHardware, "TPU (not supported by accel; accepted to say so)"},
      {"use_parallelism_config", "", &O::use_parallelism_config, kHardware,
       "with --use_fsdp and FSDP 2: export parallelism_config (PARALLELISM_CONFIG_*; on by itself when the config "
       "file has one)"},
      {.name = "num_cpu_threads_per_process",
       .field = &O::num_cpu_threads_per_process,
       .group = kLauncher,
       .help = "OMP_NUM_THREADS per worker (default: $OMP_NUM_THREADS, else physical cores / local workers)",
       .min = 1},
      {.name = "max_restarts",
       .field = &O::max_restarts,
       .group = kLauncher,
       .help = "restart the whole group up to N times after a failure",
       .min = 0},
      {"monitor_interval", "", &O::monitor_interval, kLauncher,
       "torchrun's polling interval: accepted and ignored with a note (accel sees exits at once)"},
      {"grace_period", "", &O::grace_period, kLauncher,
       "seconds between SIGTERM and SIGKILL when stopping workers (default 10)"},
      {"tee", "t", &O::tee, kLauncher,
       "streams on the console: 3 both (default), 1 stdout, 2 stderr, 0 none; or LOCAL_RANK:N,…"},
      {"log_dir", "", &O::log_dir, kLauncher,
       "also write each worker's output to files of its own: DIR/<run id>_<random>/attempt_<restart>/<local "
       "rank>/stdout.log, stderr.log, error.json (torchrun's layout)"},
      {"log_line_prefix_template", "", &O::log_line_prefix_template, kLauncher,
       "console line prefix, a template of ${role_name}, ${rank}, ${local_rank}, ${hostname} (default: "
       "$TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE, else \"[rank N] \")"},
      {"role", "", &O::role, kLauncher, "ROLE_NAME for the workers (default: default)"},
      {"local_ranks_filter", "", &O::local_ranks_filter, kLauncher,
       "local ranks whose output reaches the console, e.g. 0,3"},
      {"python", "", &O::python, kLauncher,
       "interpreter for .py programs and -m (default: $ACCEL_PYTHON, else python3)"},
      {"rdzv_token", "", &O::rdzv_token, kLauncher,
       "secret the rank-0 store requires (multi-machine: the same on every machine)"},
      {"rdzv_conf", "", &O::rdzv_conf, kLauncher,
       "torchrun's rendezvous settings, KEY=VALUE,…: join_timeout=SECONDS (how long machines wait for each other, "
       "default 600) is honoured; other keys are ignored with a note (the rendezvous is static)"},
      {"signals_to_handle", "", &O::signals_to_handle, kLauncher,
       "torchrun's SIG,… list, passed to the workers as TORCHELASTIC_SIGNALS_TO_HANDLE (default "
       "SIGTERM,SIGINT,SIGHUP,SIGQUIT); SIGINT, SIGTERM, SIGHUP and SIGQUIT always stop the job, SIGUSR1 and "
       "SIGUSR2 are always forwarded to every worker"},
      {.name = "job_port",
       .field = &O::job_port,
       .group = kLauncher,
       .help = "several machines: port of the launchers' job channel on machine 0 (default: $ACCEL_JOB_PORT, else "
               "main_process_port + 1)",
       .min = 1,
       .max = 65535},
      {"heartbeat_timeout", "", &O::heartbeat_timeout, kLauncher,
       "several machines: seconds without word from a machine's launcher before it counts as lost and the job stops "
       "(default: $ACCEL_HEARTBEAT_TIMEOUT, else 30)"},
      {"collective_timeout", "", &O::collective_timeout, kLauncher,
       "seconds a worker's collective waits for its peers before it fails naming them (default: "
       "$ACCEL_COLLECTIVE_TIMEOUT, else 600; the counterpart of InitProcessGroupKwargs(timeout=...))"},
      {"env", "", &O::env, kLauncher,
       "KEY=VALUE set in every worker's environment, repeatable (as if exported before `accel launch`; accel's own "
       "variables win)"},
      {"pty", "", &O::pty, kLauncher,
       "pseudo-terminals for worker streams shown on a terminal, so workers see one (colours, progress bars): auto "
       "(default: $ACCEL_PTY, else auto), on (also when the console is a file), off (pipes)"},
      {"stdin_rank", "", &O::stdin_rank, kLauncher,
       "the rank that reads what you type while accel runs in the foreground of a terminal (a debugger's prompt): "
       "RANK or none (default: $ACCEL_STDIN_RANK, else 0); every other rank reads /dev/null"},
      {"module", "m", &O::module, kLauncher, "run PROGRAM as a Python module (PYTHON -u -m, PYTHON as for --python)"},
      {"no_python", "", &O::no_python, kLauncher, "run PROGRAM as it is"},
      {"quiet", "q", &O::quiet, kLauncher, "no informational lines from the launcher"},
      {"dry_run", "", &O::dry_run, kLauncher, "print each rank's command and environment, start nothing"},
      {"help", "h", &O::help, kLauncher, "print this help"},
      {"tpu_cluster", "", {}, kElsewhere, "TPU pod", "TPU"},
      {"no_tpu_cluster", "", {}, kElsewhere, "TPU pod", "TPU"},
      {"tpu_use_sudo", "", {}, kElsewhere, "TPU pod", "TPU"},
      {"vm", "", {}, kElsewhere, "TPU pod", "TPU"},
      {"aws_access_key_id", "", {}, kElsewhere, "SageMaker", "SageMaker"},
      {"aws_secret_access_key", "", {}, kElsewhere, "SageMaker", "SageMaker"},
  };
}

}  // namespace

const std::vector<LauncherFlag>& launcherFlags() {
  static const std::vector<LauncherFlag> flags = build();
  return flags;
}

}  // namespace accel
