// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/facts/system_facts.h"

#include <ctime>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include <fmt/format.h>

#include "lib/common/environment.h"
#include "lib/common/error.h"
#include "lib/common/process/child_process.h"
#include "lib/common/random_bytes.h"
#include "lib/common/strings.h"
#include "lib/common/variables.h"
#include "lib/hardware/gpu_probe.h"
#include "lib/hardware/host_probe.h"
#include "lib/launch/facts/port.h"
#include "lib/launch/facts/program.h"

namespace accel::launch::facts {

std::vector<int> usableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) out.push_back(c);
  }
  return out;
}

namespace {

void probeGpus(Machine& m) {
  GpuReport gpus = ::accel::probeGpus();
  m.visible_gpus = static_cast<int>(gpus.devices.size());
  m.physical_gpus = gpus.physical_count;
  m.driver_version = gpus.driver_version;
  for (const auto& d : gpus.devices) m.gpus.push_back({d.name, d.pci_bus_id});
  m.gpu_note = gpus.source.empty() ? "no NVIDIA driver: " + gpus.unavailable_reason : "";
  if (gpus.visible_devices && m.visible_gpus == 0 && !gpus.source.empty()) {
    m.gpu_note = "CUDA_VISIBLE_DEVICES=" + *gpus.visible_devices + " hides them";
  }
}

// A memoized answer: `compute` runs the first time `key` is asked.
template <class Map, class Key, class Compute>
const typename Map::mapped_type& remembered(Map& map, const Key& key, Compute compute) {
  auto it = map.find(key);
  if (it == map.end()) it = map.emplace(key, compute()).first;
  return it->second;
}

struct MpiFamily {
  const char* launcher;
  const char* says;                   // in its --version
  std::vector<const char*> programs;  // looked for on PATH, in order
  const char* package;
};

const std::vector<MpiFamily>& families() {
  static const std::vector<MpiFamily> all = {
      {"openmpi", "Open MPI", {"mpirun.openmpi", "mpirun", "mpiexec"}, "Open MPI (Debian: apt install openmpi-bin)"},
      {"mpich",
       "HYDRA",
       {"mpiexec.mpich", "mpirun.mpich", "mpiexec.hydra", "mpirun", "mpiexec"},
       "MPICH (Debian: apt install mpich)"},
      {"mvapich",
       "MVAPICH",
       {"mpirun", "mpiexec"},
       "MVAPICH2 (not packaged by Debian: https://mvapich.cse.ohio-state.edu)"},
      {"impi", "Intel(R) MPI", {"mpirun", "mpiexec.hydra", "mpiexec"}, "Intel MPI (Intel oneAPI HPC Toolkit)"},
  };
  return all;
}

// Accelerate's --mpirun_hostfile: whichever MPI is first on PATH.
Mpi anyMpirun(const std::string& path_env) {
  for (const char* name : {"mpirun", "mpiexec"}) {
    std::string path = findExecutable(name, path_env);
    if (path.empty()) continue;
    const std::string version = mpiVersionText(path);
    return {path, version.find("Open MPI") != std::string::npos, version};
  }
  throw UsageError(
      "--mpirun_hostfile needs mpirun or mpiexec on PATH, and neither was found",
      "install Open MPI (Debian: apt install openmpi-bin), Intel MPI or MVAPICH, or drop --mpirun_hostfile");
}

Mpi familyMpirun(const MpiFamily& family, const std::string& path_env) {
  std::vector<std::string> seen;
  for (const char* name : family.programs) {
    const std::string path = findExecutable(name, path_env);
    if (path.empty()) continue;
    const std::string version = mpiVersionText(path);
    if (version.find(family.says) != std::string::npos)
      return {path, family.launcher == std::string("openmpi"), version};
    seen.push_back(fmt::format("{} ({})", path, trim(split(version, '\n').front())));
  }
  throw UsageError(fmt::format("deepspeed_multinode_launcher {} needs its mpirun, and none is on PATH{}",
                               family.launcher, seen.empty() ? "" : " (found only " + join(seen, ", ") + ")"),
                   fmt::format("install {}, or choose another deepspeed_multinode_launcher (pdsh: accel's own ssh)",
                               family.package));
}

}  // namespace

Machine gatherMachine(const std::string& hostname) {
  Machine m;
  probeGpus(m);
  HostReport host = probeHost();
  m.physical_cores = std::max(1, host.physical_cores);
  m.usable_cpus = usableCpus();
  m.hostname = hostname.empty() ? host.hostname : hostname;
  m.random_hex = randomHex(16);
  m.token_hex = randomHex(16);
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  ::localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &local);
  m.start_stamp = stamp;
  m.env = processEnvironment();
  // The directory the launcher runs in, which $PWD may not be (a parent that changed directory
  // without updating it): Accelerate takes os.getcwd().
  if (char* cwd = ::getcwd(nullptr, 0)) {
    m.env[env::kPwd.name()] = cwd;
    std::free(cwd);
  }
  m.stdin_terminal = ::isatty(0) == 1;
  m.as_root = ::geteuid() == 0;
  m.self = selfExecutable();
  return m;
}

std::string SystemNetwork::resolve(const std::string& host) const {
  return remembered(resolved_, host, [&] { return net::resolveIPv4(host); });
}

std::string SystemNetwork::interfaceOf(const std::string& address) const {
  return remembered(interfaces_, address, [&] { return net::interfaceOf(address); });
}

net::Route SystemNetwork::routeTowards(const std::string& peer) const {
  return remembered(routes_, peer, [&] { return net::routeTowards(peer); });
}

std::vector<std::string> SystemNetwork::ownAddresses() const { return net::ownAddresses(); }

bool SystemNetwork::portIsFree(int port) const {
  return remembered(free_, port, [&] { return facts::portIsFree(port); });
}

std::string SystemNetwork::portHolder(int port) const { return facts::portHolder(port); }

int SystemNetwork::freePort() const {
  if (free_port_ == 0) free_port_ = pickFreePort();
  return free_port_;
}

Mpi SystemPrograms::mpirun(const std::string& family) const {
  if (family.empty()) return anyMpirun(path_env_);
  for (const auto& f : families()) {
    if (family == f.launcher) return familyMpirun(f, path_env_);
  }
  throw UsageError(fmt::format("deepspeed_multinode_launcher {} is not an MPI launcher", family));
}

std::string mpiVersionText(const std::string& path) {
  const process::Captured c = process::captureOutputs({{path, "--version"}}, std::chrono::seconds(10), true).front();
  if (trim(c.output).empty()) {
    throw UsageError(fmt::format("'{} --version' printed nothing, so accel cannot tell which MPI it is", path),
                     "check that this mpirun runs (try it by hand), or put a working one first on PATH");
  }
  return c.output;
}

}  // namespace accel::launch::facts
