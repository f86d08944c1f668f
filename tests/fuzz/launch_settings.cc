// SPDX-License-Identifier: Apache-2.0
// Fuzz target: `accel launch` option and environment resolution, from flags, config file,
// SLURM variables and machine facts to each worker's environment (lib/launch: settings/,
// plan/build.h, plan/worker_env.h; the contract is launch_env.h). Nothing is started.
// Input: NUL-separated records, readable so that seeds can be written by hand:
//   the first record: machine facts and paradigm switches, comma-separated words: cpu, multi_gpu,
//     deepspeed, fsdp, megatron, tpu, default_config, config_file, gpus=N, physical_gpus=N,
//     cores=N, cpus=N (the launcher's usable CPUs 0..N-1);
//   "--FLAG=VALUE" or "--FLAG": a word of accel launch's command line ("--num_processes=2",
//     "--fsdp_version=2", "--tee=0:1"), parsed by parseLaunchArgs as the real command line is;
//   "@TEXT": the config file's text (JSON when it starts with '{');
//   anything else: "NAME=VALUE", the launcher's environment (SLURM_*, OMP_NUM_THREADS, …).
// Properties:
//   - parseLaunchArgs returns options or throws UsageError with a message;
//   - resolveLaunchSettings / plan::build return a plan or throw accel::Error (UsageError,
//     ConfigError) with a message; any other exception, a crash, UB, or a plan whose size the
//     input's bytes do not bound (out of memory, timeout) is a bug;
//   - a plan has num_processes / num_machines workers with distinct ranks below WORLD_SIZE, and
//     every worker's environment names its RANK, LOCAL_RANK, WORLD_SIZE and MASTER_PORT;
//   - a later round's plan, built with the port machine 0 gave it, gives it to every worker.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/config/loader.h"
#include "lib/config/schema.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/plan/build.h"
#include "lib/launch/plan/worker_env.h"
#include "lib/launch/settings/launch_args.h"
#include "lib/launch/settings/launch_settings.h"
#include "tests/fuzz/fuzz_support.h"

using namespace accel;
using namespace accel::launch::plan;
using namespace accel::launch::settings;

namespace {

// A network where every address resolves to itself, this machine holds none but loopback, and
// every port is free.
class QuietNetwork final : public accel::launch::facts::Network {
 public:
  std::string resolve(const std::string& host) const override { return host; }
  std::string interfaceOf(const std::string& address) const override { return net::isLoopback(address) ? "lo" : ""; }
  net::Route routeTowards(const std::string&) const override { return {}; }
  std::vector<std::string> ownAddresses() const override { return {}; }
  bool portIsFree(int) const override { return true; }
  std::string portHolder(int) const override { return ""; }
  int freePort() const override { return 40000; }
};

class OpenMpi final : public accel::launch::facts::Programs {
 public:
  accel::launch::facts::Mpi mpirun(const std::string&) const override { return {"/usr/bin/mpirun", true, "Open MPI"}; }
};

struct Input {
  LaunchOptions options;
  accel::launch::facts::Machine facts;
  std::optional<std::string> config_text;
};

long long clampedNumber(const std::string& text, long long lo, long long hi) {
  return std::clamp(parseInt(text).value_or(lo), lo, hi);
}

void readFacts(const std::string& header, Input& in) {
  LaunchOptions& o = in.options;
  accel::launch::facts::Machine& f = in.facts;
  f.physical_gpus = -1;
  for (const auto& word : split(header, ',')) {
    auto eq = word.find('=');
    std::string name = word.substr(0, eq), value = eq == std::string::npos ? "" : word.substr(eq + 1);
    if (name == "cpu") o.cpu = true;
    if (name == "multi_gpu") o.multi_gpu = true;
    if (name == "deepspeed") o.use_deepspeed = true;
    if (name == "fsdp") o.use_fsdp = true;
    if (name == "megatron") o.use_megatron_lm = true;
    if (name == "tpu") o.tpu = true;
    if (name == "default_config") f.default_config_exists = true;
    if (name == "config_file") o.config_file = "c.yaml";
    if (name == "gpus") f.visible_gpus = static_cast<int>(clampedNumber(value, 0, 16));
    if (name == "physical_gpus") f.physical_gpus = static_cast<int>(clampedNumber(value, 0, 16));
    if (name == "cores") f.physical_cores = static_cast<int>(clampedNumber(value, 1, 256));
    if (name == "cpus") {
      for (int c = 0; c < clampedNumber(value, 0, 256); ++c) f.usable_cpus.push_back(c);
    }
  }
  if (f.physical_gpus < f.visible_gpus) f.physical_gpus = f.visible_gpus;
  if (f.visible_gpus == 0) f.gpu_note = "no NVIDIA driver: fuzz";
  f.hostname = "fuzzhost";
  f.random_hex = "00112233445566778899aabbccddeeff";
}

// The flag records go through accel launch's own parser (launch_args.h), the program last.
Input readInput(const uint8_t* data, size_t size) {
  Input in;
  const auto records = fuzz::splitRecords(fuzz::bytes(data, size));
  std::vector<std::string> words;
  for (size_t i = 1; i < records.size(); ++i) {
    const std::string& r = records[i];
    if (startsWith(r, "--") && r.size() > 2) {
      words.push_back(r);
    } else if (startsWith(r, "@")) {
      in.config_text = r.substr(1);
    } else if (auto eq = r.find('='); eq != std::string::npos && eq > 0) {
      in.facts.env[r.substr(0, eq)] = r.substr(eq + 1);
    }
  }
  words.push_back("train.py");
  in.options = parseLaunchArgs(words);
  readFacts(records[0], in);
  return in;
}

std::string envOf(const LaunchPlan& p, const WorkerSpec& w, const char* name) {
  for (const auto& [k, v] : workerEnvironment(p, w)) {
    if (k == name) return v;
  }
  return "<unset>";
}

void checkPlan(const LaunchSettings& s, const LaunchPlan& p) {
  // This machine's share: the first total % machines machines take one process more (uneven layouts).
  const long long total = s.placement.num_processes.value, machines = s.placement.num_machines.value;
  const long long per_machine = total / machines + (std::max(0, p.machine_rank) < total % machines ? 1 : 0);
  FUZZ_CHECK(static_cast<long long>(p.workers.size()) == per_machine, "worker count");
  FUZZ_CHECK(p.world_size == s.placement.num_processes.value && p.num_machines == s.placement.num_machines.value,
             "WORLD_SIZE or GROUP_WORLD_SIZE is not the number asked for");
  std::set<int> ranks;
  // One process of a non-distributed job, and mpirun's ranks, get Accelerate's simple-launcher
  // environment (no RANK, LOCAL_RANK, WORLD_SIZE: plan/build.cc); every other worker has them.
  const bool may_lack = s.keys.has("mpirun_config.mpirun_hostfile") || (p.world_size == 1 && p.num_machines == 1);
  auto is = [&](const WorkerSpec& w, const char* name, long long value) {
    const std::string v = envOf(p, w, name);
    return v == std::to_string(value) || (may_lack && v == "<unset>");
  };
  for (const auto& w : p.workers) {
    FUZZ_CHECK(w.rank >= 0 && w.rank < p.world_size && ranks.insert(w.rank).second, "bad or repeated rank");
    FUZZ_CHECK(is(w, launch_env::kRank, w.rank), "RANK");
    FUZZ_CHECK(is(w, launch_env::kLocalRank, w.local_rank), "LOCAL_RANK");
    FUZZ_CHECK(is(w, launch_env::kWorldSize, p.world_size), "WORLD_SIZE");
  }
}

// A later round: machine 0 gave it another port, which reaches every worker.
void checkNextRound(const LaunchSettings& s, const accel::launch::facts::Facts& f) {
  const LaunchPlan next = build(s, f, {1, 40123, std::nullopt, {}});
  for (const auto& w : next.workers) {  // a world of one meets nobody: no MASTER_PORT to move
    const std::string port = envOf(next, w, launch_env::kMasterPort);
    FUZZ_CHECK(port == "40123" || (next.world_size == 1 && port == "<unset>"), "MASTER_PORT");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in;
  try {
    in = readInput(data, size);
  } catch (const Error& e) {
    FUZZ_CHECK(std::string(e.what()).size() > 0, "a command-line error without a message");
    return 0;
  }
  std::optional<Config> config;
  const std::string path = in.config_text && startsWith(*in.config_text, "{") ? "c.json" : "c.yaml";
  if (in.config_text) {
    LoadResult loaded = parseConfigText(*in.config_text, path);
    // loadConfigFile throws ConfigError on errors, and `accel launch` refuses problems and
    // SageMaker files: the launch stops there.
    if (!loaded.errors.empty() || !loaded.problems.empty() || loaded.config.sageMaker()) return 0;
    config = std::move(loaded.config);
  }
  static const QuietNetwork network;
  static const OpenMpi programs;
  accel::launch::facts::Facts facts;
  facts.machine = in.facts;
  facts.network = &network;
  facts.programs = &programs;
  facts.program = {"/bin/true"};
  facts.mpi_hostfile = "/tmp/hostfile";
  try {
    const LaunchSettings settings = resolveLaunchSettings(in.options, config, path, facts);
    if (settings.hosts.how == Hosts::How::Ssh || settings.hosts.how == Hosts::How::Srun) return 0;  // no workers here
    checkPlan(settings, build(settings, facts));
    checkNextRound(settings, facts);
  } catch (const Error& e) {
    FUZZ_CHECK(std::string(e.what()).size() > 0, "an accel error without a message");
  }
  return 0;
}
