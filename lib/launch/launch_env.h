// SPDX-License-Identifier: Apache-2.0
// THE launcher <-> worker contract: every environment variable `accel launch` sets for a worker,
// and that libaccel_runtime (and PyTorch's env:// init, and Accelerate's state.py) read. Names
// and value formats follow torchrun and Accelerate exactly, so their workers run unchanged.
// Every other variable accel reads is named here too (the last sections), so that code never
// spells a variable's name itself. Header-only constants; no dependencies.
#pragma once

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
// Where rank 0 of the job hosts the rendezvous store (torch's env:// init connects here).
// accel sets no TORCHELASTIC_USE_AGENT_STORE: the launcher hosts no store, rank 0 does.
inline constexpr const char* kMasterAddr = "MASTER_ADDR";
inline constexpr const char* kMasterPort = "MASTER_PORT";
inline constexpr const char* kRestartCount = "TORCHELASTIC_RESTART_COUNT";  // 0 on first try
inline constexpr const char* kMaxRestarts = "TORCHELASTIC_MAX_RESTARTS";
inline constexpr const char* kRunId = "TORCHELASTIC_RUN_ID";
// The signals torchrun's agent handles: --signals_to_handle as given, else torchrun's default
// (lib/launch/signal_channel.h says what accel's launcher does with each).
inline constexpr const char* kSignalsToHandle = "TORCHELASTIC_SIGNALS_TO_HANDLE";
inline constexpr const char* kHandledSignals = "SIGTERM,SIGINT,SIGHUP,SIGQUIT";
// Where a worker's @record writes its exception (lib/launch/error_file.h): one per worker and round.
inline constexpr const char* kErrorFile = "TORCHELASTIC_ERROR_FILE";
inline constexpr const char* kNcclAsyncErrorHandling = "TORCH_NCCL_ASYNC_ERROR_HANDLING";  // "1"
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

// ---- accel's own ----
inline constexpr const char* kAccelRunId = "ACCEL_RUN_ID";  // same on every machine of a job
// Secret the rank-0 store requires from every client (the same on every machine of a job).
inline constexpr const char* kStoreToken = "ACCEL_STORE_TOKEN";
inline constexpr const char* kMachineName = "ACCEL_MACHINE";  // host label used in output prefixes
// Where this machine's launcher answers a worker's "rank R" with what became of that rank
// (lib/launch/rank_questions.h): an abstract Unix socket, '@' standing for its leading NUL.
inline constexpr const char* kLauncherSocket = "ACCEL_LAUNCHER_SOCKET";
// The launcher's progress board (lib/launch/progress_board.h), set with --hang_timeout: an
// inherited descriptor of shared memory where libaccel_runtime counts the collectives it
// finished, so that a silent rank that still trains is not taken for a hung one. The count of
// LOCAL_RANK r is the unsigned 64-bit word at byte kProgressSlotBytes * r, changed atomically.
inline constexpr const char* kProgressFd = "ACCEL_PROGRESS_FD";
inline constexpr unsigned kProgressSlotBytes = 64;  // a cache line: ranks never share one

// ---- what the launcher reads (not passed on by it) ----
inline constexpr const char* kPython = "ACCEL_PYTHON";             // interpreter for .py programs
inline constexpr const char* kPySpy = "ACCEL_PY_SPY";              // py-spy, where PATH and the workers' venv lack it
inline constexpr const char* kNvmlLibrary = "ACCEL_NVML_LIBRARY";  // NVML to dlopen (tests: a fake)
inline constexpr const char* kCudaLibrary = "ACCEL_CUDA_LIBRARY";  // libcuda to dlopen (tests: a fake)
inline constexpr const char* kJobPort = "ACCEL_JOB_PORT";          // --job_port
inline constexpr const char* kHeartbeatTimeout = "ACCEL_HEARTBEAT_TIMEOUT";  // --heartbeat_timeout
inline constexpr const char* kHangTimeout = "ACCEL_HANG_TIMEOUT";            // --hang_timeout
inline constexpr const char* kStacksTimeout = "ACCEL_STACKS_TIMEOUT";        // defaults::kStacksTimeoutSeconds
// Seconds a collective waits for its peers (--collective_timeout; read by the runtime).
inline constexpr const char* kCollectiveTimeout = "ACCEL_COLLECTIVE_TIMEOUT";
// The terminal (lib/launch/terminal_settings.h): pseudo-terminals for workers (--pty), the rank
// that takes the user's input (--stdin_rank), and how often a progress bar's frame is written
// where the console is not a terminal.
inline constexpr const char* kPty = "ACCEL_PTY";
inline constexpr const char* kStdinRank = "ACCEL_STDIN_RANK";
inline constexpr const char* kProgressInterval = "ACCEL_PROGRESS_INTERVAL";
// Where Accelerate's default_config.yaml lives: $HF_HOME/accelerate, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/huggingface/accelerate.
inline constexpr const char* kHfHome = "HF_HOME";
inline constexpr const char* kXdgCacheHome = "XDG_CACHE_HOME";
inline constexpr const char* kHome = "HOME";
inline constexpr const char* kTmpDir = "TMPDIR";  // where the workers' error files go (as torchrun's)
// Several machines from one (lib/launch/fleet): more ssh options (DeepSpeed's
// PDSH_SSH_ARGS_APPEND), the accel to run on the other hosts, and DeepSpeed's forwarded files.
inline constexpr const char* kSshArgs = "ACCEL_SSH_ARGS";
inline constexpr const char* kRemoteAccel = "ACCEL_REMOTE_ACCEL";
inline constexpr const char* kDeepSpeedEnvFile = "DS_ENV_FILE";  // default .deepspeed_env
inline constexpr const char* kPythonPath = "PYTHONPATH";
// torchrun's prefix template for worker lines, when --log_line_prefix_template is not given.
inline constexpr const char* kLogLinePrefixTemplate = "TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE";
// A SLURM job's placement (scripts/slurm/): this node, the job's nodes, and their names.
inline constexpr const char* kSlurmJobId = "SLURM_JOB_ID";
inline constexpr const char* kSlurmNodeId = "SLURM_NODEID";
inline constexpr const char* kSlurmStepNumNodes = "SLURM_STEP_NUM_NODES";
inline constexpr const char* kSlurmNumNodes = "SLURM_NNODES";
inline constexpr const char* kSlurmGpusOnNode = "SLURM_GPUS_ON_NODE";
inline constexpr const char* kSlurmStepId = "SLURM_STEP_ID";
inline constexpr const char* kSlurmStepNodeList = "SLURM_STEP_NODELIST";
inline constexpr const char* kSlurmJobNodeList = "SLURM_JOB_NODELIST";
inline constexpr const char* kSlurmNodeList = "SLURM_NODELIST";

// ---- what the runtime reads besides the contract above ----
// `accel launch --debug` (Accelerate's name); ACCEL_DEBUG=INFO or DETAIL asks the same of a
// worker started some other way: the runtime says which transport each group uses.
inline constexpr const char* kAccelerateDebugMode = "ACCELERATE_DEBUG_MODE";
inline constexpr const char* kAccelDebug = "ACCEL_DEBUG";
inline constexpr const char* kAccelShm = "ACCEL_SHM";  // "0": no shared memory, Gloo for every CPU group
// Replaces the machine identity that decides which ranks share memory (comm/host_identity.h).
inline constexpr const char* kAccelHostId = "ACCEL_HOST_ID";
// `accel test`'s preflight (apps/bench/preflight.cc) alters this rank's result of its first
// all_reduce: the proof, for its tests and for a user who doubts it, that a wrong result is caught.
inline constexpr const char* kPreflightCorrupt = "ACCEL_PREFLIGHT_CORRUPT";
inline constexpr const char* kGlooSocketIfname = "GLOO_SOCKET_IFNAME";  // Gloo's interface (torch's name)
// NCCL's bootstrap interface; the launcher sets both to the one that reaches main_process_ip.
inline constexpr const char* kNcclSocketIfname = "NCCL_SOCKET_IFNAME";
// Ranks as MPI launchers give them, when RANK / WORLD_SIZE are unset (mpirun, Intel MPI, MVAPICH).
inline constexpr const char* kOmpiRank = "OMPI_COMM_WORLD_RANK";
inline constexpr const char* kOmpiSize = "OMPI_COMM_WORLD_SIZE";
inline constexpr const char* kOmpiLocalRank = "OMPI_COMM_WORLD_LOCAL_RANK";
inline constexpr const char* kOmpiLocalSize = "OMPI_COMM_WORLD_LOCAL_SIZE";
inline constexpr const char* kPmiRank = "PMI_RANK";
inline constexpr const char* kPmiSize = "PMI_SIZE";
inline constexpr const char* kMpiLocalRankId = "MPI_LOCALRANKID";
inline constexpr const char* kMpiLocalNRanks = "MPI_LOCALNRANKS";
inline constexpr const char* kMv2Rank = "MV2_COMM_WORLD_RANK";
inline constexpr const char* kMv2Size = "MV2_COMM_WORLD_SIZE";
inline constexpr const char* kMv2LocalRank = "MV2_COMM_WORLD_LOCAL_RANK";
inline constexpr const char* kMv2LocalSize = "MV2_COMM_WORLD_LOCAL_SIZE";

}  // namespace accel::launch_env
