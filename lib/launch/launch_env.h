// SPDX-License-Identifier: Apache-2.0
// THE launcher <-> worker contract: every environment variable `accel launch` sets for a worker,
// and that libaccel_runtime (and PyTorch's env:// init, and Accelerate's state.py) read. Names
// and value formats follow torchrun and Accelerate exactly, so their workers run unchanged.
// Header-only constants; no dependencies.
#pragma once

namespace accel::launch_env {

// ---- torchrun's worker environment (torch/distributed/elastic/agent/server) ----
inline constexpr const char* kRank = "RANK";                      // global rank, 0..WORLD_SIZE-1
inline constexpr const char* kLocalRank = "LOCAL_RANK";           // rank on this machine
inline constexpr const char* kWorldSize = "WORLD_SIZE";           // processes in the job
inline constexpr const char* kLocalWorldSize = "LOCAL_WORLD_SIZE";  // processes on this machine
inline constexpr const char* kGroupRank = "GROUP_RANK";           // machine rank
inline constexpr const char* kGroupWorldSize = "GROUP_WORLD_SIZE";  // machines in the job
inline constexpr const char* kRoleRank = "ROLE_RANK";             // = RANK (one role)
inline constexpr const char* kRoleWorldSize = "ROLE_WORLD_SIZE";  // = WORLD_SIZE
inline constexpr const char* kRoleName = "ROLE_NAME";             // --role, default "default"
// Where rank 0 of the job hosts the rendezvous store (torch's env:// init connects here).
// accel sets no TORCHELASTIC_USE_AGENT_STORE: the launcher hosts no store, rank 0 does.
inline constexpr const char* kMasterAddr = "MASTER_ADDR";
inline constexpr const char* kMasterPort = "MASTER_PORT";
inline constexpr const char* kRestartCount = "TORCHELASTIC_RESTART_COUNT";  // 0 on first try
inline constexpr const char* kMaxRestarts = "TORCHELASTIC_MAX_RESTARTS";
inline constexpr const char* kRunId = "TORCHELASTIC_RUN_ID";
inline constexpr const char* kNcclAsyncErrorHandling = "TORCH_NCCL_ASYNC_ERROR_HANDLING";  // "1"
inline constexpr const char* kOmpNumThreads = "OMP_NUM_THREADS";
inline constexpr const char* kCudaVisibleDevices = "CUDA_VISIBLE_DEVICES";  // from gpu_ids

// ---- Accelerate's worker environment (accelerate/commands/launch.py, state.py) ----
inline constexpr const char* kMixedPrecision = "ACCELERATE_MIXED_PRECISION";  // no|fp16|bf16|fp8
inline constexpr const char* kUseCpu = "ACCELERATE_USE_CPU";              // "True" / "False"
inline constexpr const char* kDebugMode = "ACCELERATE_DEBUG_MODE";        // "true" when on
inline constexpr const char* kCpuAffinity = "ACCELERATE_CPU_AFFINITY";    // "1" when on
inline constexpr const char* kGradientAccumulationSteps = "ACCELERATE_GRADIENT_ACCUMULATION_STEPS";
inline constexpr const char* kDynamoBackend = "ACCELERATE_DYNAMO_BACKEND";  // upper case, "NO"
inline constexpr const char* kDynamoMode = "ACCELERATE_DYNAMO_MODE";
inline constexpr const char* kDynamoUseFullgraph = "ACCELERATE_DYNAMO_USE_FULLGRAPH";  // True/False
inline constexpr const char* kDynamoUseDynamic = "ACCELERATE_DYNAMO_USE_DYNAMIC";
inline constexpr const char* kDynamoUseRegionalCompilation =
    "ACCELERATE_DYNAMO_USE_REGIONAL_COMPILATION";
inline constexpr const char* kUseDeepSpeed = "ACCELERATE_USE_DEEPSPEED";  // "true"
inline constexpr const char* kUseFsdp = "ACCELERATE_USE_FSDP";            // "true"
inline constexpr const char* kUseMegatronLm = "ACCELERATE_USE_MEGATRON_LM";  // "true"
inline constexpr const char* kConfigDsFields = "ACCELERATE_CONFIG_DS_FIELDS";
// DeepSpeed and FSDP settings are exported under these prefixes (see paradigm_env.cc).
inline constexpr const char* kDeepSpeedPrefix = "ACCELERATE_DEEPSPEED_";
inline constexpr const char* kFsdpPrefix = "FSDP_";

// ---- accel's own ----
inline constexpr const char* kAccelRunId = "ACCEL_RUN_ID";  // same on every machine of a job
// Secret the rank-0 store requires from every client (the same on every machine of a job).
inline constexpr const char* kStoreToken = "ACCEL_STORE_TOKEN";
inline constexpr const char* kMachineName = "ACCEL_MACHINE";  // host label used in output prefixes

}  // namespace accel::launch_env
