// SPDX-License-Identifier: Apache-2.0
// `accel deepspeed` and a link named deepspeed: DeepSpeed 0.19's launcher command line
// (lib/launch/settings/deepspeed_args.h), run as the `accel launch` that does the same
// (deepspeed_launch.h).
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "apps/commands.h"
#include "lib/common/atomic_file.h"
#include "lib/common/environment.h"
#include "lib/common/strings.h"
#include "lib/hardware/gpu_probe.h"
#include "lib/launch/facts/cpu_topology.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/settings/deepspeed_launch.h"
#include "lib/launch/settings/launch_args.h"

namespace accel {

namespace {

// DeepSpeed's CPU accelerator's device count: LOCAL_SIZE, else its NUMA nodes with CPUs, else 1.
int cpuDevices(const std::map<std::string, std::string>& env) {
  if (auto it = env.find(launch_env::kLocalSize); it != env.end()) {
    if (auto n = parseInt(it->second); n && *n > 0) return static_cast<int>(*n);
  }
  const auto t = launch::facts::readNumaNodes("/sys");
  int nodes = 0;
  for (const auto& [node, cpus] : t.node_cpus) nodes += !cpus.empty();
  return std::max(1, nodes);
}

// --save_pid: /tmp/PID.deepspeed holds the launcher's pid while it runs.
struct PidFile {
  std::string path;
  explicit PidFile(std::string p) : path(std::move(p)) {
    if (path.empty()) return;
    writeFileAtomic(path, std::to_string(::getpid()));
    std::cout << "launcher pid: " << ::getpid() << std::endl;
  }
  ~PidFile() {
    if (!path.empty()) ::unlink(path.c_str());
  }
};

}  // namespace

int runDeepSpeed(const std::vector<std::string>& words) {
  const auto args = launch::settings::parseDeepSpeedArgs(words);
  if (args.help) {
    std::cout << launch::settings::deepSpeedHelp();
    return 0;
  }
  launch::settings::DeepSpeedMachine m;
  m.env = processEnvironment();
  m.gpus = static_cast<int>(probeGpus().devices.size());
  m.cpu_devices = cpuDevices(m.env);
  m.exists = [](const std::string& path) { return fileExists(path); };
  const auto ds = launch::settings::deepSpeedLaunch(args, m, static_cast<long>(::getpid()));
  for (const auto& note : ds.notes) std::cerr << ("accel: " + note + "\n");
  // DeepSpeed's runner takes CUDA_VISIBLE_DEVICES out of the environment: the slots say it now.
  ::unsetenv(launch_env::kCudaVisibleDevices);
  const PidFile pid(ds.save_pid_file);
  return runLaunch(launch::settings::parseLaunchArgs(ds.words, launch::settings::Grammar::Launch));
}

}  // namespace accel
