// SPDX-License-Identifier: Apache-2.0
// Test support: the facts of a machine that is not this one (lib/launch/facts/facts.h), so a
// test builds the settings and the plan of any machine, network and MPI in milliseconds,
// without a process, a socket or a file of the machine it runs on.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "lib/launch/facts/facts.h"
#include "lib/launch/plan/build.h"
#include "lib/launch/plan/launch_plan.h"
#include "lib/launch/settings/launch_args.h"
#include "lib/launch/settings/launch_settings.h"

namespace accel::test {

// A network whose answers the test writes: names resolve through `names` (an IPv4 address
// resolves to itself, loopback names to 127.0.0.1), this machine holds the addresses of
// `interfaces`, routes come from `routes`, and `busy` ports are taken.
class FakeNetwork final : public launch::facts::Network {
 public:
  // host -> address ("" for one that does not resolve); "h" is another machine, 10.0.0.1
  std::map<std::string, std::string> names = {{"h", "10.0.0.1"}};
  std::map<std::string, std::string> interfaces;  // this machine's address -> its interface
  std::map<std::string, net::Route> routes;       // a peer's address or name -> how this machine reaches it
  std::set<int> busy;                             // ports held by someone else
  int free_port = 41000;                          // what freePort() gives

  std::string resolve(const std::string& host) const override;
  std::string interfaceOf(const std::string& address) const override;
  net::Route routeTowards(const std::string& peer) const override;
  std::vector<std::string> ownAddresses() const override;
  bool portIsFree(int port) const override { return !busy.count(port); }
  std::string portHolder(int port) const override { return busy.count(port) ? "pid 7 (fake)" : ""; }
  int freePort() const override { return free_port; }
};

// Every MPI family is installed, at /usr/bin/mpirun (Open MPI's) or /usr/bin/mpiexec.hydra.
class FakePrograms final : public launch::facts::Programs {
 public:
  launch::facts::Mpi mpirun(const std::string& family) const override;
};

// A machine named host0 with `gpus` GPUs (PCI 0000:01:00.0, 0000:02:00.0, …), 8 physical cores
// and no CPU affinity read, in /work, its network and programs the fakes above; `program` is
// what its workers run; no CPU topology unless a test gives one (facts.cpu_topology).
struct FakeMachine {
  FakeNetwork network;
  FakePrograms programs;
  launch::facts::Facts facts;
  explicit FakeMachine(int gpus = 0);
  FakeMachine(const FakeMachine&) = delete;
  FakeMachine& operator=(const FakeMachine&) = delete;
};

// The launch of `words` (`accel launch` words, or torchrun's with `grammar`; the program is
// added when the words name none), with `config_text` as the config file ("" for none), on
// `machine`: its settings, and its plan for `round`.
launch::settings::LaunchSettings settingsFor(const std::vector<std::string>& words, const FakeMachine& machine,
                                             const std::string& config_text = "",
                                             launch::settings::Grammar grammar = launch::settings::Grammar::Launch);
launch::plan::LaunchPlan planFor(const std::vector<std::string>& words, const FakeMachine& machine,
                                 const std::string& config_text = "",
                                 launch::settings::Grammar grammar = launch::settings::Grammar::Launch,
                                 const launch::plan::Round& round = {});

// Both, for tests that look at the settings behind a plan.
struct Planned {
  launch::settings::LaunchSettings settings;
  launch::plan::LaunchPlan plan;
};
Planned launchFor(const std::vector<std::string>& words, const FakeMachine& machine,
                  const std::string& config_text = "",
                  launch::settings::Grammar grammar = launch::settings::Grammar::Launch);

// A setting as --debug lists it: "VALUE (ORIGIN)", or "<unset>".
std::string settingText(const launch::settings::LaunchSettings& s, const std::string& name);

// A worker's variable as the plan gives it at spawn (plan/worker_env.h), or "<unset>".
std::string envOf(const launch::plan::LaunchPlan& plan, const launch::plan::WorkerSpec& worker,
                  const std::string& name);

}  // namespace accel::test
