// SPDX-License-Identifier: Apache-2.0
// The real facts (facts.h) of the machine this launcher runs on: the GPU and host probes, the
// process's CPU affinity and environment, the kernel's network view, PATH's mpirun. Each
// question is asked of the system once.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "lib/launch/facts/facts.h"

namespace accel::launch::facts {

// The CPUs this process may run on (sched_getaffinity), ascending.
std::vector<int> usableCpus();

// This machine now. `hostname`: the name to go by where a hostfile head gave one ("" for the
// machine's own).
Machine gatherMachine(const std::string& hostname = "");

class SystemNetwork final : public Network {
 public:
  std::string resolve(const std::string& host) const override;
  std::string interfaceOf(const std::string& address) const override;
  net::Route routeTowards(const std::string& peer) const override;
  std::vector<std::string> ownAddresses() const override;
  bool portIsFree(int port) const override;
  std::string portHolder(int port) const override;
  int freePort() const override;

 private:
  mutable std::map<std::string, std::string> resolved_, interfaces_;
  mutable std::map<std::string, net::Route> routes_;
  mutable std::map<int, bool> free_;
  mutable int free_port_ = 0;
};

class SystemPrograms final : public Programs {
 public:
  explicit SystemPrograms(std::string path_env) : path_env_(std::move(path_env)) {}
  Mpi mpirun(const std::string& family) const override;

 private:
  std::string path_env_;
};

// `path --version`'s output, which says which MPI it is. Throws UsageError when it prints nothing.
std::string mpiVersionText(const std::string& path);

}  // namespace accel::launch::facts
