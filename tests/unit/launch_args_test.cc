// SPDX-License-Identifier: Apache-2.0
// accel launch's command line from the flag tables: Accelerate 1.15's flag list, argparse's
// spellings and errors, and what the flags added from Accelerate 1.15 export.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/config/schema.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/plan/launch_plan.h"
#include "lib/launch/plan/worker_env.h"
#include "lib/launch/settings/launch_args.h"
#include "lib/launch/settings/launch_help.h"
#include "lib/launch/settings/launcher_flag_table.h"
#include "tests/support/fake_facts.h"

using namespace accel;
using namespace accel::launch::plan;
using namespace accel::launch::settings;

namespace {

// accel's own flags, which Accelerate does not have.
// DeepSpeed's runner has the hostfile flags (include, exclude, num_nodes, num_gpus, ssh_port);
// ssh_args is accel's form of its PDSH_SSH_ARGS_APPEND.
const std::set<std::string> kAccelOnly = {
    "collective_timeout", "exclude", "hostfile", "include", "num_gpus", "num_nodes", "ssh_args", "ssh_port", "dry_run",
    "fsdp_ignored_modules", "grace_period", "hang_timeout", "heartbeat_timeout", "help", "job_port",
    "local_ranks_filter", "log_line_prefix_template", "pty", "python", "rdzv_token",
    "signals_to_handle",  // torchrun's, not Accelerate's
    "stdin_rank", "on_hang", "flight_recorder", "straggler_window", "straggler_share", "straggler_lateness",
    "event_log", "metrics_port", "metrics_addr", "metrics_linger", "startup_timeout", "max_startup_failures",
    "max_machine_failures", "gpu_free_timeout", "max_no_progress_restarts",
    // DeepSpeed's launcher's, which accel deepspeed runs through them
    "bind_core_list", "bind_cores_to_rank", "deepspeed_env", "enable_each_rank_log", "launcher_args", "local_rank_arg",
    "venv_script"};

std::set<std::string> accelerateFlags() {
  std::ifstream in(ACCEL_SOURCE_DIR "/tests/compat/accelerate_1_15_launch_flags.txt");
  std::set<std::string> names;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') names.insert(line);
  }
  return names;
}

std::map<std::string, std::string> workerEnv(const std::vector<std::string>& words) {
  accel::test::FakeMachine m(2);
  const LaunchPlan p = accel::test::planFor(words, m);
  std::map<std::string, std::string> env;
  for (const auto& [k, v] : workerEnvironment(p, p.workers.at(0))) env[k] = v;
  return env;
}

std::string usageError(const std::vector<std::string>& words) {
  try {
    parseLaunchArgs(words);
  } catch (const UsageError& e) {
    return std::string(e.what()) + " | " + e.hint();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("launch flags: the same names as Accelerate 1.15's accelerate launch", "[launch][flags]") {
  const auto theirs = accelerateFlags();
  REQUIRE(theirs.size() > 100);  // the file was read
  const auto list = launchFlagNames();
  const std::set<std::string> ours(list.begin(), list.end());
  for (const auto& name : theirs) {
    INFO("Accelerate's --" << name << " is missing from accel launch");
    CHECK(ours.count(name));
  }
  std::set<std::string> torchruns;
  for (const auto& row : launcherFlags()) {
    if (row.torchrun) torchruns.insert(std::string(row.name));
  }
  for (const auto& name : ours) {
    INFO("accel's --" << name << " is neither Accelerate's, nor torchrun's, nor on the accel-only list");
    CHECK((theirs.count(name) || kAccelOnly.count(name) || torchruns.count(name)));
  }
  CHECK(list.size() == ours.size());  // no flag in both tables
}

TEST_CASE("launch flags: argparse's spellings, the program's words untouched", "[launch][flags]") {
  auto a = parseLaunchArgs({"--num_processes", "2", "--cpu", "-q", "train.py", "--cpu", "--lr", "1"});
  auto b = parseLaunchArgs({"--num-processes=2", "--cpu", "--quiet", "--", "train.py", "--cpu", "--lr", "1"});
  for (const auto* o : {&a, &b}) {
    CHECK(o->values.at("num_processes") == 2);  // typed by the schema as it is parsed
    CHECK(o->cpu);
    CHECK(o->quiet);
    CHECK(o->command == std::vector<std::string>{"train.py", "--cpu", "--lr", "1"});
  }
  auto last = parseLaunchArgs({"--num_processes", "2", "--num_processes", "4", "--env", "A=1", "--env", "B=x=y", "p"});
  CHECK(last.values.at("num_processes") == 4);  // argparse: the last one wins
  CHECK(last.env == std::vector<std::string>{"A=1", "B=x=y"});
  auto keyed =
      parseLaunchArgs({"--zero_stage", "3", "--fp8_margin=2", "--dynamo_use_fullgraph", "--tee", "0", "-m", "mod"});
  CHECK(keyed.values.at("deepspeed_config.zero_stage") == 3);
  CHECK(keyed.values.at("fp8_config.margin") == 2);
  CHECK(keyed.values.at("dynamo_config.dynamo_use_fullgraph") == true);
  CHECK(keyed.tee == "0");
  CHECK(keyed.module);
}

TEST_CASE("launch flags: a bad command line names the word and the fix", "[launch][flags]") {
  CHECK(usageError({"--num_processess", "2", "p"}) ==
        "accel launch: unknown option '--num_processess' | did you mean '--num_processes'?");
  CHECK(usageError({"--cpu=yes", "p"}) == "--cpu takes no value (got '--cpu=yes') | ");
  CHECK(usageError({"--num_processes"}) == "--num_processes needs a value | run `accel launch --help` for usage");
  CHECK(usageError({"--num_processes", "--cpu", "p"}) ==
        "--num_processes needs a value | run `accel launch --help` for usage");
  CHECK(usageError({"--max_restarts", "many", "p"}) == "--max_restarts: 'many' is not an integer | ");
  CHECK(usageError({"--env", "NO_EQUALS", "p"}) ==
        "--env: 'NO_EQUALS' is not KEY=VALUE | give one variable per --env, e.g. --env NCCL_DEBUG=INFO");
  CHECK(usageError({"--tpu_use_sudo", "p"}) ==
        "--tpu_use_sudo is for TPU pod launches, which accel does not do | accel launches NVIDIA GPU and CPU "
        "jobs; drop the flag");
  CHECK(usageError({"--aws_access_key_id", "K", "p"}) ==
        "--aws_access_key_id is for SageMaker launches, which accel does not do | accel launches NVIDIA GPU and "
        "CPU jobs; drop the flag");
  // Typed by the schema when resolved, naming the flag as the user spelled it.
  CHECK_THROWS_WITH(workerEnv({"--fp8_margin", "x", "--cpu"}), "--fp8_margin: 'x' is not an integer");
  CHECK_THROWS_WITH(workerEnv({"--cpu", "--use_parallelism_config"}),
                    "--use_parallelism_config needs --use_fsdp with FSDP 2");
}

TEST_CASE("launch flags: digits past long long are out of range, with the range, not 'not an integer'",
          "[launch][flags]") {
  const std::string huge = "99999999999999999999";
  CHECK(usageError({"--max_restarts", huge, "p"}) ==
        "--max_restarts: '" + huge + "' is out of range: it must be from 0 to 1000000 | ");
  // Within long long but past the count a round number can reach: refused, never narrowed.
  CHECK(usageError({"--max_restarts", "4294967296", "p"}) ==
        "--max_restarts: '4294967296' is out of range: it must be from 0 to 1000000 | ");
  CHECK(usageError({"--job_port", huge, "p"}) ==
        "--job_port: '" + huge + "' is out of range: it must be from 1 to 65535 | ");
  CHECK(usageError({"--num_cpu_threads_per_process", "-" + huge, "p"}) ==
        "--num_cpu_threads_per_process: '-" + huge + "' is out of range: it must be from 1 to 9223372036854775807 | ");
  // Config-key flags, typed by the schema's range.
  CHECK_THROWS_WITH(workerEnv({"--cpu", "--num_processes", huge}),
                    "--num_processes: '" + huge + "' is out of range: it must be from 1 to 9223372036854775807");
  CHECK_THROWS_WITH(workerEnv({"--cpu", "--main_process_port", huge}),
                    "--main_process_port: '" + huge + "' is out of range: it must be from 0 to 65535");
  CHECK_THROWS_WITH(
      workerEnv({"--cpu", "--fp8_margin", huge}),
      "--fp8_margin: '" + huge + "' is out of range: it must be from -9223372036854775808 to 9223372036854775807");
  CHECK(whyNotInteger("12", 1, 65535).empty());
  CHECK(whyNotInteger("1x", 1, 65535) == "'1x' is not an integer");
  CHECK(whyNotInteger("+", 1, 65535) == "'+' is not an integer");
}

TEST_CASE("launch flags: Accelerate 1.15's newer flags export as Accelerate exports them", "[launch][flags]") {
  auto fsdp = workerEnv({"--use_fsdp", "--fsdp_version", "2", "--fsdp_activation_checkpointing_offload", "TRUE",
                         "--use_parallelism_config", "--parallelism_config_tp_size", "2",
                         "--parallelism_config_cp_comm_strategy", "alltoall"});
  CHECK(fsdp["FSDP_VERSION"] == "2");
  CHECK(fsdp["FSDP_ACTIVATION_CHECKPOINTING_OFFLOAD"] == "true");
  CHECK(fsdp["FSDP_SHARDING_STRATEGY"] == "FULL_SHARD");  // launch defaults under the paradigm
  CHECK(fsdp["ACCELERATE_USE_PARALLELISM_CONFIG"] == "true");
  CHECK(fsdp["PARALLELISM_CONFIG_TP_SIZE"] == "2");
  CHECK(fsdp["PARALLELISM_CONFIG_DP_SHARD_SIZE"] == "1");
  CHECK(fsdp["PARALLELISM_CONFIG_CP_BACKEND"] == "torch");
  // Context/sequence-parallel options only when that size is above 1, as Accelerate.
  CHECK(fsdp.count("PARALLELISM_CONFIG_CP_COMM_STRATEGY") == 0);
  CHECK(fsdp.count("PARALLELISM_CONFIG_SP_ATTN_IMPLEMENTATION") == 0);
  auto cp = workerEnv({"--use_fsdp", "--fsdp_version", "2", "--use_parallelism_config", "--parallelism_config_cp_size",
                       "2", "--parallelism_config_sp_size", "2"});
  CHECK(cp["PARALLELISM_CONFIG_CP_COMM_STRATEGY"] == "allgather");
  CHECK(cp["PARALLELISM_CONFIG_SP_SEQ_LENGTH_IS_VARIABLE"] == "True");
  CHECK(cp["PARALLELISM_CONFIG_SP_ATTN_IMPLEMENTATION"] == "sdpa");
  CHECK(cp.count("PARALLELISM_CONFIG_SP_SEQ_LENGTH") == 0);  // Accelerate writes "None": see docs/launch.md
  CHECK(workerEnv({"--use_fsdp", "--fsdp_version", "2", "--use_parallelism_config", "--parallelism_config_cp_size", "2",
                   "--parallelism_config_cp_comm_strategy", "alltoall"})["PARALLELISM_CONFIG_CP_COMM_STRATEGY"] ==
        "alltoall");
  auto megatron = workerEnv({"--use_megatron_lm", "--megatron_lm_attention_backend", "flash",
                             "--megatron_lm_context_parallel_size", "2", "--megatron_lm_use_rotary_position_embeddings",
                             "yes", "--megatron_lm_recompute_granularity", "selective"});
  CHECK(megatron["ACCELERATE_USE_MEGATRON_LM"] == "true");
  CHECK(megatron["MEGATRON_LM_ATTENTION_BACKEND"] == "flash");
  CHECK(megatron["MEGATRON_LM_CONTEXT_PARALLEL_SIZE"] == "2");
  CHECK(megatron["MEGATRON_LM_USE_ROTARY_POSITION_EMBEDDINGS"] == "True");
  CHECK(megatron["MEGATRON_LM_RECOMPUTE_GRANULARITY"] == "selective");
  CHECK(megatron["MEGATRON_LM_TP_DEGREE"] == "1");
  CHECK(megatron["MEGATRON_LM_GRADIENT_CLIPPING"] == "1.0");
  CHECK(megatron.count("MEGATRON_LM_EXPERT_MODEL_PARALLEL_SIZE") == 0);  // unset: not exported
  auto fp8 = workerEnv({"--cpu", "--mixed_precision", "fp8", "--fp8_override_linear_precision", "true,false,true",
                        "--fp8_backend", "te"});
  CHECK(fp8["ACCELERATE_FP8_OVERRIDE_FPROP"] == "True");
  CHECK(fp8["ACCELERATE_FP8_OVERRIDE_DGRAD"] == "False");
  CHECK(fp8["ACCELERATE_FP8_OVERRIDE_WGRAD"] == "True");
  CHECK(fp8["ACCELERATE_FP8_BACKEND"] == "TE");
  CHECK(fp8["ACCELERATE_FP8_FORMAT"] == "HYBRID");
  auto plain = workerEnv({"--cpu", "--downcast_bf16", "--env", "NCCL_DEBUG=INFO"});
  CHECK(plain["NCCL_DEBUG"] == "INFO");
  CHECK(plain.count("FSDP_VERSION") == 0);  // no paradigm, no paradigm defaults
  CHECK(plain.count("ACCELERATE_FP8_FORMAT") == 0);
  CHECK(plain.count("XLA_DOWNCAST_BF16") == 0);  // TPU only, as in Accelerate
}

TEST_CASE("launch flags: torchrun's --signals_to_handle reaches the workers as given, other names are refused",
          "[launch][flags][signals]") {
  CHECK(workerEnv({"--num_processes", "2"})["TORCHELASTIC_SIGNALS_TO_HANDLE"] == "SIGTERM,SIGINT,SIGHUP,SIGQUIT");
  CHECK(workerEnv({"--num_processes", "2", "--signals-to-handle",
                   "SIGTERM, SIGUSR1,SIGUSR2"})["TORCHELASTIC_SIGNALS_TO_HANDLE"] == "SIGTERM, SIGUSR1,SIGUSR2");
  CHECK(workerEnv({"--num_processes", "2", "--signals_to_handle",
                   "SIGINT,SIGTERM,SIGHUP,SIGQUIT,SIGUSR1,SIGUSR2"})["TORCHELASTIC_SIGNALS_TO_HANDLE"] ==
        "SIGINT,SIGTERM,SIGHUP,SIGQUIT,SIGUSR1,SIGUSR2");
  CHECK_THROWS_WITH(workerEnv({"--signals_to_handle", "SIGTERM,SIGWINCH"}),
                    "--signals_to_handle: 'SIGWINCH' is not a signal accel launch handles (in 'SIGTERM,SIGWINCH')");
  CHECK_THROWS_WITH(workerEnv({"--signals_to_handle", "TERM"}),
                    "--signals_to_handle: 'TERM' is not a signal accel launch handles (in 'TERM')");
  CHECK_THROWS_WITH(workerEnv({"--signals_to_handle", "SIGTERM,"}),
                    "--signals_to_handle: an empty name is not a signal accel launch handles (in 'SIGTERM,')");
}

TEST_CASE("launch flags: the variables the runtime reads are the ones the schema exports", "[launch][flags]") {
  CHECK(keySpec("mixed_precision").exports == launch_env::kMixedPrecision);
  CHECK(keySpec("deepspeed_config.gradient_accumulation_steps").exports == launch_env::kGradientAccumulationSteps);
  const std::vector<std::pair<const char*, const char*>> sharding = {
      {"deepspeed_config.zero_stage", launch_env::kDeepSpeedZeroStage},
      {"deepspeed_config.deepspeed_config_file", launch_env::kDeepSpeedConfigFile},
      {"deepspeed_config.offload_optimizer_device", launch_env::kDeepSpeedOffloadOptimizer},
      {"deepspeed_config.offload_param_device", launch_env::kDeepSpeedOffloadParam},
      {"deepspeed_config.gradient_clipping", launch_env::kGradientClipping},
      {"fsdp_config.fsdp_version", launch_env::kFsdpVersion},
      {"fsdp_config.fsdp_sharding_strategy", launch_env::kFsdpShardingStrategy},
      {"fsdp_config.fsdp_reshard_after_forward", launch_env::kFsdpReshardAfterForward},
      {"fsdp_config.fsdp_offload_params", launch_env::kFsdpOffloadParams},
      {"fsdp_config.fsdp_auto_wrap_policy", launch_env::kFsdpAutoWrapPolicy},
      {"fsdp_config.fsdp_transformer_layer_cls_to_wrap", launch_env::kFsdpTransformerClsToWrap},
      {"fsdp_config.fsdp_min_num_params", launch_env::kFsdpMinNumParams}};
  for (const auto& [key, name] : sharding) {
    INFO(key);
    CHECK(keySpec(key).exports == name);
  }
}

TEST_CASE("launch flags: --help lists every flag of both tables", "[launch][flags]") {
  const std::string help = launchHelp();
  for (const auto& name : launchFlagNames()) {
    INFO(name);
    CHECK(help.find("--" + name) != std::string::npos);
  }
}
