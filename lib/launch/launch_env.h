// SPDX-License-Identifier: Apache-2.0
// THE launcher <-> worker contract: every environment variable `accel launch` sets for a worker,
// and that libaccel_runtime (and PyTorch's env:// init, and Accelerate's state.py) read. Names
// and value formats follow torchrun and Accelerate exactly, so their workers run unchanged.
// Every other variable accel reads is a row of lib/common/variables.h; code never spells a
// variable's name itself (CTest `layers`).
#pragma once

#include <string_view>

#include "lib/common/variables.h"

namespace accel::launch_env {

// ---- torchrun's worker environment (torch/distributed/elastic/agent/server) ----
inline constexpr const char* kRank = "RANK";                        // global rank, 0..WORLD_SIZE-1
inline constexpr const char* kLocalRank = "LOCAL_RANK";             // rank on this machine
inline constexpr const char* kWorldSize = "WORLD_SIZE";             // processes in the job
inline constexpr const char* kLocalWorldSize = "LOCAL_WORLD_SIZE";  // processes on this machine
inline constexpr const char* kGroupRank = "GROUP_RANK";             // machine rank
inline constexpr const char* kGroupWorldSize = "GROUP_WORLD_SIZE";  // machines in the job
inline constexpr const char* kRoleRank = "ROLE_RANK";               // = RANK (one role)
inline constexpr const char* kRoleWorldSize = "ROLE_WORLD_SIZE";    // = WORLD_SIZE
inline constexpr const char* kRoleName = "ROLE_NAME";               // --role, default "default"
// DeepSpeed's launcher (deepspeed/launcher/launch.py) sets these beside RANK, LOCAL_RANK (its global
// rank modulo LOCAL_SIZE), WORLD_SIZE, MASTER_*, and CUDA_VISIBLE_DEVICES (the machine's slots).
inline constexpr const char* kLocalSize = "LOCAL_SIZE";  // processes on this machine
inline constexpr const char* kCrossRank = "CROSS_RANK";  // machine rank
inline constexpr const char* kCrossSize = "CROSS_SIZE";  // machines in the job
// Where rank 0 of the job hosts the rendezvous store (torch's env:// init connects here).
// accel sets no TORCHELASTIC_USE_AGENT_STORE: the launcher hosts no store, rank 0 does.
inline constexpr const char* kMasterAddr = "MASTER_ADDR";
inline constexpr const char* kMasterPort = "MASTER_PORT";
inline constexpr const char* kRestartCount = "TORCHELASTIC_RESTART_COUNT";  // 0 on first try
inline constexpr const char* kMaxRestarts = "TORCHELASTIC_MAX_RESTARTS";
inline constexpr const char* kRunId = "TORCHELASTIC_RUN_ID";
// The signals torchrun's agent handles: --signals_to_handle as given, else torchrun's default
// (lib/common/process/signal_channel.h says what accel's launcher does with each).
inline constexpr const char* kSignalsToHandle = "TORCHELASTIC_SIGNALS_TO_HANDLE";
inline constexpr const char* kHandledSignals = "SIGTERM,SIGINT,SIGHUP,SIGQUIT";
// Where a worker's @record writes its exception (lib/launch/supervise/error_file.h): one per worker and round.
inline constexpr const char* kErrorFile = "TORCHELASTIC_ERROR_FILE";
inline constexpr const char* kNcclAsyncErrorHandling = "TORCH_NCCL_ASYNC_ERROR_HANDLING";  // "1"
// "1" on RTX 40-series machines with an older driver, as Accelerate's launcher sets them (plan/consumer_gpus.h).
inline constexpr const char* kNcclP2pDisable = "NCCL_P2P_DISABLE";
inline constexpr const char* kNcclIbDisable = "NCCL_IB_DISABLE";
inline constexpr const char* kOmpNumThreads = "OMP_NUM_THREADS";
inline constexpr const char* kKmpAffinity = "KMP_AFFINITY";  // CPU jobs, as Accelerate sets them
inline constexpr const char* kKmpBlocktime = "KMP_BLOCKTIME";
inline constexpr const char* kCudaVisibleDevices = "CUDA_VISIBLE_DEVICES";  // from gpu_ids
inline constexpr const char* kCudaDeviceOrder = "CUDA_DEVICE_ORDER";        // the user's; shown by accel env

// ---- Accelerate's worker environment (accelerate/commands/launch.py, state.py) ----
// The variables written from settings (ACCELERATE_MIXED_PRECISION, ACCELERATE_DYNAMO_*, the
// DeepSpeed, FSDP, Megatron-LM, FP8 and parallelism ones) are named in the config schema's
// `exports` column (lib/config/schema.h), beside the key they carry. The runtime reads these two;
// a test checks that they match the schema's.
inline constexpr const char* kMixedPrecision = "ACCELERATE_MIXED_PRECISION";  // no|fp16|bf16|fp8
inline constexpr const char* kGradientAccumulationSteps = "ACCELERATE_GRADIENT_ACCUMULATION_STEPS";
inline constexpr const char* kUseCpu = "ACCELERATE_USE_CPU";                               // "True" / "False"
inline constexpr const char* kUseDeepSpeed = "ACCELERATE_USE_DEEPSPEED";                   // "true"
inline constexpr const char* kUseFsdp = "ACCELERATE_USE_FSDP";                             // "true"
inline constexpr const char* kUseMegatronLm = "ACCELERATE_USE_MEGATRON_LM";                // "true"
inline constexpr const char* kUseParallelismConfig = "ACCELERATE_USE_PARALLELISM_CONFIG";  // "true"
inline constexpr const char* kConfigDsFields = "ACCELERATE_CONFIG_DS_FIELDS";
// The DeepSpeed and FSDP settings the libtorch component shards by (runtime/torch/zero/
// zero_options.h); a test checks them against the schema's exports too.
inline constexpr const char* kDeepSpeedZeroStage = "ACCELERATE_DEEPSPEED_ZERO_STAGE";
inline constexpr const char* kDeepSpeedConfigFile = "ACCELERATE_DEEPSPEED_CONFIG_FILE";
inline constexpr const char* kDeepSpeedOffloadOptimizer = "ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE";
inline constexpr const char* kDeepSpeedOffloadParam = "ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_DEVICE";
inline constexpr const char* kGradientClipping = "ACCELERATE_GRADIENT_CLIPPING";
inline constexpr const char* kFsdpVersion = "FSDP_VERSION";
inline constexpr const char* kFsdpShardingStrategy = "FSDP_SHARDING_STRATEGY";
inline constexpr const char* kFsdpReshardAfterForward = "FSDP_RESHARD_AFTER_FORWARD";
inline constexpr const char* kFsdpOffloadParams = "FSDP_OFFLOAD_PARAMS";
inline constexpr const char* kFsdpAutoWrapPolicy = "FSDP_AUTO_WRAP_POLICY";
inline constexpr const char* kFsdpTransformerClsToWrap = "FSDP_TRANSFORMER_CLS_TO_WRAP";
inline constexpr const char* kFsdpMinNumParams = "FSDP_MIN_NUM_PARAMS";

// ---- accel's own ----
inline constexpr const char* kAccelRunId = "ACCEL_RUN_ID";  // same on every machine of a job
// Secret the rank-0 store requires from every client (the same on every machine of a job).
inline constexpr const char* kStoreToken = "ACCEL_STORE_TOKEN";
// What a variable's value may be shown as: a secret's is never printed or written anywhere
// (console, --dry_run, --debug, logs, error and stacks files), only handed to the workers.
inline constexpr const char* kNotShown = "(set, not shown)";
inline bool isSecret(std::string_view name) { return name == kStoreToken; }
inline constexpr const char* kMachineName = "ACCEL_MACHINE";  // host label used in output prefixes
// Where this machine's launcher answers a worker's "rank R" with what became of that rank
// (lib/launch/supervise/rank_questions.h): an abstract Unix socket, '@' standing for its leading NUL.
inline constexpr const char* kLauncherSocket = "ACCEL_LAUNCHER_SOCKET";
// The launcher's progress board (lib/launch/supervise/progress_board.h), set with --hang_timeout
// or --max_restarts: an inherited descriptor of shared memory where libaccel_runtime counts the
// collectives it finished, so that a silent rank that still trains is not taken for a hung one,
// and notes the step of each checkpoint it saved, so that a restart that made no progress is
// known (--max_no_progress_restarts). LOCAL_RANK r's slot starts at byte kProgressSlotBytes * r:
// its first unsigned 64-bit word is the count, its second the last saved step plus one (0: none
// saved), each changed atomically.
inline constexpr const char* kProgressFd = "ACCEL_PROGRESS_FD";
inline constexpr unsigned kProgressSlotBytes = 64;  // a cache line: ranks never share one

// The flight recorder (lib/common/flight_ring.h): each libaccel_runtime rank keeps its last N
// collectives (0: none), as torch's TORCH_FR_BUFFER_SIZE does. The launcher reads it in its own
// environment, sizes the shared rings by it and sets it for the workers (one parse for both).
inline const env::Variable<int> kFlightEntries{"ACCEL_FR_BUFFER_SIZE", 2000, env::entries,
                                               "collectives each rank's flight recorder keeps (0: off)"};
// The launcher's flight recorder rings: an inherited descriptor of shared memory (memfd
// "accel-flight") holding one ring of flight::ringBytes(kFlightEntries) bytes per LOCAL_RANK, in
// order, which the launcher reads at a stop or when asked, whatever became of the worker.
inline constexpr const char* kFlightFd = "ACCEL_FLIGHT_FD";
// A worker's place in the launcher's shared memory (the progress board's slots, the flight
// rings), where LOCAL_RANK is not it: torchrun's --virtual_local_rank gives every worker
// LOCAL_RANK 0. Unset: LOCAL_RANK is the place.
inline constexpr const char* kLocalSlot = "ACCEL_LOCAL_SLOT";
// Python workers (plan/torch_flight.h): the Unix socket where accel's hook starts torch's worker
// server, which the launcher asks for the rank's flight record; and torch's own variables.
inline constexpr const char* kFrSocket = "ACCEL_FR_SOCKET";
inline constexpr const char* kTorchFrBufferSize = "TORCH_FR_BUFFER_SIZE";
inline constexpr const char* kTorchNcclTraceBufferSize = "TORCH_NCCL_TRACE_BUFFER_SIZE";
// Python workers on GPUs (NCCL): torch's watchdog dumps its record on a collective's timeout to
// the file <prefix><rank> (the launcher keeps it at a stop), and writing to the pipe
// <prefix><rank> asks for such a dump; each set where the user set none of its names (in the
// launcher's environment, or by --env).
inline constexpr const char* kTorchNcclDumpOnTimeout = "TORCH_NCCL_DUMP_ON_TIMEOUT";
inline constexpr const char* kTorchFrDumpTempFile = "TORCH_FR_DUMP_TEMP_FILE";
inline constexpr const char* kTorchNcclDebugInfoTempFile = "TORCH_NCCL_DEBUG_INFO_TEMP_FILE";
inline constexpr const char* kTorchNcclDebugInfoPipeFile = "TORCH_NCCL_DEBUG_INFO_PIPE_FILE";

// Seconds a collective waits for its peers: set from --collective_timeout, read by the runtime,
// and checked by the launcher in its own environment (one parse for both).
inline const env::Variable<double> kCollectiveTimeout{"ACCEL_COLLECTIVE_TIMEOUT",
                                                      defaults::seconds(defaults::kCollectiveTimeout),
                                                      env::positiveSeconds, "seconds a collective waits for its peers"};
// The workers' Python path where the launcher sets it (DeepSpeed: the script's directory first).
inline constexpr const char* kPythonPath = "PYTHONPATH";
// `accel launch --debug` (Accelerate's name, written from the schema's exports): the runtime says
// which transport each group uses.
inline constexpr const char* kAccelerateDebugMode = "ACCELERATE_DEBUG_MODE";
inline constexpr const char* kGlooSocketIfname = "GLOO_SOCKET_IFNAME";  // Gloo's interface (torch's name)
// NCCL's bootstrap interface; the launcher sets both to the one that reaches main_process_ip.
inline constexpr const char* kNcclSocketIfname = "NCCL_SOCKET_IFNAME";

}  // namespace accel::launch_env
