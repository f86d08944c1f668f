// SPDX-License-Identifier: Apache-2.0
// How a prepared model is sharded (ZeRO's stages), read from the launch's DeepSpeed or FSDP
// settings as Accelerate's plugins read them, so that a config file written for a Python job
// shards a libtorch program the same way:
//   DeepSpeed (ACCELERATE_USE_DEEPSPEED): ACCELERATE_DEEPSPEED_ZERO_STAGE, the offload devices,
//     ACCELERATE_GRADIENT_CLIPPING; a deepspeed_config_file's zero_optimization.stage,
//     offload_optimizer/offload_param.device and gradient_clipping win over them, and its "auto"
//     values take them, as Accelerate fills them.
//   FSDP (ACCELERATE_USE_FSDP), FSDP_VERSION 1: FSDP_SHARDING_STRATEGY (or a strategy name in
//     FSDP_RESHARD_AFTER_FORWARD): FULL_SHARD is stage 3, SHARD_GRAD_OP stage 2, NO_SHARD DDP;
//     the hybrid strategies are refused (one machine's ranks would need a group of their own).
//     FSDP_VERSION 2: FSDP_RESHARD_AFTER_FORWARD true is stage 3, false stage 2.
//     FSDP_OFFLOAD_PARAMS offloads parameters and optimizer state; FSDP_AUTO_WRAP_POLICY with
//     FSDP_TRANSFORMER_CLS_TO_WRAP or FSDP_MIN_NUM_PARAMS chooses the sharding units.
// A bad value is an Error naming the variable (or the file and key) and what it may be.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/state/distributed_env.h"

namespace accel {

struct ZeroOptions {
  int stage = 0;                          // 0: DDP; 1, 2, 3: ZeRO's stages
  bool offload_optimizer = false;         // optimizer state and its step on the CPU (CUDA devices)
  bool offload_params = false;            // stage 3's parameter shards in host memory too
  double gradient_clipping = 0;           // > 0: every optimizer step clips to it first (DeepSpeed's)
  std::vector<std::string> unit_classes;  // module classes that are sharding units
  int64_t unit_min_params = 0;            // > 0: a module holding at least this many is a unit
  std::string source;                     // where the stage came from, for messages ("FSDP_VERSION 2, ...")
};

// The settings of the launch's environment; stage 0 when it asks for neither DeepSpeed nor FSDP.
ZeroOptions readZeroOptions(const EnvReader& getenv);
ZeroOptions readZeroOptions();  // this process's environment

// "stage 3 (ZeRO-3: parameters, gradients and optimizer state sharded)", for messages and docs.
std::string describeStage(int stage);

}  // namespace accel
