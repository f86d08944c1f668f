// SPDX-License-Identifier: Apache-2.0
// Every environment variable accel reads that is not the launcher <-> worker contract
// (lib/launch/launch_env.h: what a launcher sets for its workers), one row each, as NCCL's
// NCCL_PARAM declares its knobs: the name, what it means, its value when unset, how its text is
// read, and this process's value, read once. Code reads a variable through its row and never
// spells its name (CTest `layers` finds a name written anywhere else, map lookups included). A
// launch reads the rows in the launcher's environment as its facts hold it
// (lib/launch/facts/facts.h), so that tests give any; the rest of accel reads this process's.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "lib/common/defaults.h"

namespace accel::env {

using Map = std::map<std::string, std::string>;
// A variable's text where it is set, nullopt where it is not (a test's stand-in for getenv).
using Lookup = std::function<std::optional<std::string>(const char* name)>;

// This process's environment as a Lookup.
Lookup processLookup();

template <class T> class Variable {
 public:
  // Reads a set, non-empty text; throws UsageError naming the variable when it does not read.
  using Parse = T (*)(const char* name, const std::string& text);

  Variable(const char* name, T fallback, Parse parse, const char* meaning)
      : name_(name), fallback_(std::move(fallback)), parse_(parse), meaning_(meaning) {}
  Variable(const Variable&) = delete;
  Variable& operator=(const Variable&) = delete;

  const char* name() const { return name_; }
  const char* meaning() const { return meaning_; }
  const T& fallback() const { return fallback_; }

  // Whether it is set, and not empty.
  bool setIn(const Map& env) const { return !textIn(env).empty(); }
  // Its value: `fallback` where unset or empty.
  T in(const Map& env) const { return read(textIn(env)); }
  T in(const Lookup& env) const { return read(env(name_).value_or("")); }
  // This process's value, read (and checked) on first use and kept.
  const T& value() const {
    std::call_once(once_, [this] { cached_ = in(processLookup()); });
    return *cached_;
  }

 private:
  std::string textIn(const Map& env) const {
    auto it = env.find(name_);
    return it == env.end() ? "" : it->second;
  }
  T read(const std::string& text) const { return text.empty() ? fallback_ : parse_(name_, text); }

  const char* name_;
  T fallback_;
  Parse parse_;
  const char* meaning_;
  mutable std::once_flag once_;
  mutable std::optional<T> cached_;
};

// How the rows read their text.
std::string text(const char* name, const std::string& text);
double positiveSeconds(const char* name, const std::string& text);  // "NAME='x' is not a number of seconds above 0"
double secondsOrOff(const char* name, const std::string& text);     // 0 turns the setting off
int port(const char* name, const std::string& text);                // 1 to 65535
double signedSeconds(const char* name, const std::string& text);    // at most 1e6 either way
inline constexpr int kMaxEntries = 1'000'000;
int entries(const char* name, const std::string& text);  // a buffer's entries, 0 to kMaxEntries

// ---- where accel keeps and finds files ----
inline const Variable<std::string> kHome{"HOME", "", text, "the user's home (else the password database's)"};
inline const Variable<std::string> kXdgCacheHome{"XDG_CACHE_HOME", "", text, "the user's cache folder (else ~/.cache)"};
inline const Variable<std::string> kHfHome{"HF_HOME", "", text,
                                           "Hugging Face's folder: its accelerate/ holds the config"};
inline const Variable<std::string> kTmpDir{"TMPDIR", "/tmp", text, "where temporary folders go"};
inline const Variable<std::string> kPath{"PATH", "", text, "where programs are found"};
inline const Variable<std::string> kColumns{"COLUMNS", "", text, "the terminal's width, where none can be asked"};
inline const Variable<std::string> kPwd{"PWD", "", text, "the working directory, as the shell says it"};

// ---- the GPUs ----
inline const Variable<std::string> kNvmlLibrary{"ACCEL_NVML_LIBRARY", "", text, "the NVML to dlopen (tests: a fake)"};
inline const Variable<std::string> kCudaLibrary{"ACCEL_CUDA_LIBRARY", "", text,
                                                "the libcuda to dlopen (tests: a fake)"};
inline const Variable<std::string> kCudaDeviceOrder{"CUDA_DEVICE_ORDER", "", text, "the user's GPU order (accel env)"};

// ---- the launcher's own settings (lib/launch/settings/), each beside its flag ----
inline const Variable<std::string> kPython{"ACCEL_PYTHON", "", text, "the interpreter for .py programs (--python)"};
inline const Variable<std::string> kPySpy{"ACCEL_PY_SPY", "", text, "py-spy, where PATH and the workers' venv lack it"};
inline const Variable<int> kJobPort{"ACCEL_JOB_PORT", 0, port, "the launchers' job channel on machine 0 (--job_port)"};
inline const Variable<double> kHeartbeatTimeout{"ACCEL_HEARTBEAT_TIMEOUT", defaults::kHeartbeatTimeoutSeconds,
                                                positiveSeconds, "silence before a machine is lost"};
inline const Variable<double> kHangTimeout{"ACCEL_HANG_TIMEOUT", 0, secondsOrOff,
                                           "seconds without progress before the job stops (--hang_timeout)"};
// Tests only: this launcher's clock, as the job channel and the straggler watch see it, runs this
// far ahead of the machine's (network namespaces share one clock: job/clock_offset.h is tested so).
inline const Variable<double> kTestClockSkew{"ACCEL_TEST_CLOCK_SKEW", 0, signedSeconds,
                                             "tests: seconds added to this launcher's clock for other machines"};
inline const Variable<double> kStacksTimeout{"ACCEL_STACKS_TIMEOUT", defaults::kStacksTimeoutSeconds, secondsOrOff,
                                             "how long the stack tools may take before a stop (0: none)"};
inline const Variable<std::string> kEtcdUser{"ACCEL_ETCD_USER", "", text, "the etcd rendezvous' user"};
inline const Variable<std::string> kEtcdPassword{"ACCEL_ETCD_PASSWORD", "", text, "that user's password"};
inline const Variable<std::string> kEventLog{"ACCEL_EVENT_LOG", "", text,
                                             "the job's event log: a file, or fd:N (--event_log)"};
inline const Variable<int> kMetricsPort{"ACCEL_METRICS_PORT", 0, port, "serve Prometheus' /metrics (--metrics_port)"};
inline const Variable<std::string> kPty{"ACCEL_PTY", "", text, "pseudo-terminals for the workers (--pty)"};
inline const Variable<std::string> kStdinRank{"ACCEL_STDIN_RANK", "", text, "the rank that reads the user's input"};
inline const Variable<double> kProgressInterval{"ACCEL_PROGRESS_INTERVAL", 10, positiveSeconds,
                                                "seconds between two frames of a progress bar off a terminal"};
inline const Variable<std::string> kSshArgs{"ACCEL_SSH_ARGS", "", text, "more ssh options for every host"};
inline const Variable<std::string> kRemoteAccel{"ACCEL_REMOTE_ACCEL", "", text, "the accel to run on the other hosts"};
inline const Variable<std::string> kDeepSpeedEnvFile{"DS_ENV_FILE", ".deepspeed_env", text,
                                                     "DeepSpeed's file of variables for every host"};
inline const Variable<std::string> kLogLinePrefixTemplate{"TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE", "", text,
                                                          "torchrun's prefix template for worker lines"};

// ---- where a launch sits: SLURM (settings/slurm.h) and Kubernetes (settings/pod_convention.h) ----
inline const Variable<std::string> kSlurmJobId{"SLURM_JOB_ID", "", text, "the SLURM job"};
inline const Variable<std::string> kSlurmNodeId{"SLURM_NODEID", "", text, "this node's rank in the job"};
inline const Variable<std::string> kSlurmStepNumNodes{"SLURM_STEP_NUM_NODES", "", text, "the step's nodes"};
inline const Variable<std::string> kSlurmNumNodes{"SLURM_NNODES", "", text, "the job's nodes"};
inline const Variable<std::string> kSlurmGpusOnNode{"SLURM_GPUS_ON_NODE", "", text, "this node's GPUs"};
inline const Variable<std::string> kSlurmStepId{"SLURM_STEP_ID", "", text, "set inside srun"};
inline const Variable<std::string> kSlurmStepNodeList{"SLURM_STEP_NODELIST", "", text, "the step's hosts"};
inline const Variable<std::string> kSlurmJobNodeList{"SLURM_JOB_NODELIST", "", text, "the job's hosts"};
inline const Variable<std::string> kSlurmNodeList{"SLURM_NODELIST", "", text, "the job's hosts (older SLURM)"};
inline const Variable<std::string> kK8s{"ACCEL_K8S", "", text, "0: no Kubernetes pod conventions"};
inline const Variable<std::string> kKubernetesServiceHost{"KUBERNETES_SERVICE_HOST", "", text,
                                                          "set in every Kubernetes container"};

// ---- what the runtime reads besides the contract ----
inline const Variable<std::string> kAccelDebug{"ACCEL_DEBUG", "", text, "INFO or DETAIL: say which transport"};
inline const Variable<std::string> kAccelShm{"ACCEL_SHM", "", text, "0: no shared memory, Gloo for every CPU group"};
inline const Variable<std::string> kAccelHostId{"ACCEL_HOST_ID", "", text,
                                                "the machine identity ranks share memory by"};
inline const Variable<std::string> kPreflightCorrupt{"ACCEL_PREFLIGHT_CORRUPT", "", text,
                                                     "accel test: this rank alters its first all_reduce"};
// Ranks as MPI launchers give them, when RANK / WORLD_SIZE are unset.
inline const Variable<std::string> kOmpiRank{"OMPI_COMM_WORLD_RANK", "", text, "Open MPI's rank"};
inline const Variable<std::string> kOmpiSize{"OMPI_COMM_WORLD_SIZE", "", text, "Open MPI's world"};
inline const Variable<std::string> kOmpiLocalRank{"OMPI_COMM_WORLD_LOCAL_RANK", "", text, "Open MPI's local rank"};
inline const Variable<std::string> kOmpiLocalSize{"OMPI_COMM_WORLD_LOCAL_SIZE", "", text, "Open MPI's local world"};
inline const Variable<std::string> kPmiRank{"PMI_RANK", "", text, "Hydra's rank"};
inline const Variable<std::string> kPmiSize{"PMI_SIZE", "", text, "Hydra's world"};
inline const Variable<std::string> kMpiLocalRankId{"MPI_LOCALRANKID", "", text, "Hydra's local rank"};
inline const Variable<std::string> kMpiLocalNRanks{"MPI_LOCALNRANKS", "", text, "Hydra's local world"};
inline const Variable<std::string> kMv2Rank{"MV2_COMM_WORLD_RANK", "", text, "MVAPICH's rank"};
inline const Variable<std::string> kMv2Size{"MV2_COMM_WORLD_SIZE", "", text, "MVAPICH's world"};
inline const Variable<std::string> kMv2LocalRank{"MV2_COMM_WORLD_LOCAL_RANK", "", text, "MVAPICH's local rank"};
inline const Variable<std::string> kMv2LocalSize{"MV2_COMM_WORLD_LOCAL_SIZE", "", text, "MVAPICH's local world"};

}  // namespace accel::env
