// SPDX-License-Identifier: Apache-2.0
// The accel subcommands, free of CLI parsing (main.cc owns CLI11). Each returns an exit status
// and throws accel::Error subclasses for main to print.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/common/error.h"
#include "lib/config/loader.h"
#include "lib/launch/fleet/head_orders.h"
#include "lib/launch/settings/launch_options.h"
#include "lib/launch/stacks/collect_stacks.h"

namespace CLI {
class App;
}

namespace accel {

struct ConfigFileOption {
  std::string path;  // empty: Accelerate's default location
};

struct EstimateMemoryOptions {
  std::string model;                // a .safetensors file, a shard index or a model directory
  std::vector<std::string> dtypes;  // empty: all of Accelerate's
  int num_processes = -1;           // -1: the visible GPUs (at least 1) on each machine
  int num_machines = 1;
  std::string mixed_precision = "bf16";  // no (fp32), bf16 or fp16
  bool json = false;
};

int runConfigWizard(const ConfigFileOption& file);
int runConfigDefault(const ConfigFileOption& file, const std::string& mixed_precision, bool force);
int runConfigUpdate(const ConfigFileOption& file);
int runConfigShow(const ConfigFileOption& file, bool as_json);
int runConfigValidate(const std::vector<std::string>& files);
int runEnv(const ConfigFileOption& file, bool as_json);
// `accel estimate-memory`: the model's memory from its safetensors headers (lib/model/).
int runEstimateMemory(const EstimateMemoryOptions& options);
// `accel test`: the preflight, then Accelerate's test script, each through `accel launch` with
// the config file and `launch_args` (launch flags).
int runTest(const ConfigFileOption& file, const std::vector<std::string>& launch_args);
// `accel stacks`: every rank's stack on this machine for the job named (a launcher pid or run id,
// or "": the only one), each tool within `timeout_seconds`.
int runStacks(const std::string& job_selector, double timeout_seconds);
// The job's stacks (and flight records) as its launcher gathered them, each tool within
// `seconds`; nullopt with `why` it gave none.
std::optional<launch::stacks::GatheredStacks> askLauncherStacks(const launch::stacks::RunningJob& job, double seconds,
                                                                std::string& why);
// `accel top`: the job named (as `accel stacks` names it) seen live on a terminal, or one frame
// (`once`, or off a terminal), one JSON object (`json`), or its event log followed (`events`).
struct TopOptions {
  bool once = false, json = false, events = false;
};
int runTop(const std::string& job_selector, const TopOptions& options);
// `accel fr`: where the ranks part, from the flight records of a running job (`target` a launcher
// pid or run id, or "": the only one) or of a folder a stop left; `as_json`: one JSON object.
int runFlightRecords(const std::string& target, double timeout_seconds, bool as_json);

// `accel completion SHELL` and `accel manual` (apps/reference/): from the command table as `app`
// registered it.
int runCompletion(const CLI::App& app, const std::string& shell);
int runManual(const CLI::App& app);
// `accel to-fsdp2`: `config_file` converted to FSDP2, written to `output_file` (empty: the config
// file itself, which only `overwrite` allows).
int runToFsdp2(const std::string& config_file, const std::string& output_file, bool overwrite);
// `accel merge-weights` and `accel tpu-config`: throw a UsageError saying what to use instead.
int refuseMergeWeights();
int refuseTpuConfig();
// `accel launch` (lib/launch/launch.h), or `accel torchrun`; `orders`: set when a head started
// this launcher (`accel launch --from_head`).
int runLaunch(const launch::settings::LaunchOptions& options, const launch::fleet::HeadOrders* orders = nullptr);
// `accel launch --from_head`: reads the head's orders on stdin and launches this machine's share.
int runLaunchFromHead();
// `accel deepspeed ARGS` (or a link named deepspeed): DeepSpeed's launcher command line.
int runDeepSpeed(const std::vector<std::string>& words);

// `accel: warning: where: what` and its hint, for each (main.cc).
void printWarnings(const std::vector<Diagnostic>& diagnostics);
// A loaded file's warnings, and its problems as warnings saying that a launch refuses them.
void printFindings(const LoadResult& loaded);

}  // namespace accel
