// SPDX-License-Identifier: Apache-2.0
#include "tests/support/fake_facts.h"

#include <fmt/format.h>

#include <arpa/inet.h>

#include "lib/config/loader.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/plan/worker_env.h"
#include "lib/launch/settings/launch_args.h"

namespace accel::test {

namespace {

bool isAddress(const std::string& text) {
  in_addr a{};
  return ::inet_pton(AF_INET, text.c_str(), &a) == 1;
}

}  // namespace

std::string FakeNetwork::resolve(const std::string& host) const {
  if (auto it = names.find(host); it != names.end()) return it->second;
  if (isAddress(host)) return host;
  if (host == "localhost") return "127.0.0.1";
  return "";
}

std::string FakeNetwork::interfaceOf(const std::string& address) const {
  auto it = interfaces.find(address);
  return it == interfaces.end() ? "" : it->second;
}

net::Route FakeNetwork::routeTowards(const std::string& peer) const {
  auto it = routes.find(peer);
  if (it == routes.end()) it = routes.find(resolve(peer));
  return it == routes.end() ? net::Route{} : it->second;
}

std::vector<std::string> FakeNetwork::ownAddresses() const {
  std::vector<std::string> out;
  for (const auto& [address, iface] : interfaces) {
    if (!net::isLoopback(address)) out.push_back(iface + " " + address);
  }
  return out;
}

launch::facts::Mpi FakePrograms::mpirun(const std::string& family) const {
  if (family.empty() || family == "openmpi") return {"/usr/bin/mpirun", true, "mpirun (Open MPI) 4.1.4"};
  return {"/usr/bin/mpiexec.hydra", false, "HYDRA build details"};
}

FakeMachine::FakeMachine(int gpus) {
  launch::facts::Machine& m = facts.machine;
  m.visible_gpus = m.physical_gpus = gpus;
  m.gpu_note = gpus == 0 ? "no NVIDIA driver: fake" : "";
  for (int i = 0; i < gpus; ++i)
    m.gpus.push_back({"NVIDIA H100 80GB HBM3", fmt::format("00000000:{:02x}:00.0", i + 1)});
  m.physical_cores = 8;
  m.hostname = "host0";
  m.random_hex = "00112233445566778899aabbccddeeff";
  m.token_hex = "ffeeddccbbaa99887766554433221100";
  m.env = {{"PWD", "/work"}, {"PATH", "/usr/bin:/bin"}};
  m.self = "/opt/accel/bin/accel";
  network.interfaces = {{"127.0.0.1", "lo"}};
  facts.network = &network;
  facts.programs = &programs;
  facts.program = {"/bin/true"};
}

launch::settings::LaunchSettings settingsFor(const std::vector<std::string>& words, const FakeMachine& machine,
                                             const std::string& config_text, launch::settings::Grammar grammar) {
  launch::settings::LaunchOptions o = launch::settings::parseLaunchArgs(words, grammar);
  if (o.command.empty()) o.command = machine.facts.program;
  std::optional<Config> config;
  if (!config_text.empty()) {
    auto loaded = parseConfigText(config_text, "c.yaml");
    if (!loaded.errors.empty()) throw ConfigError(loaded.errors);
    config = loaded.config;
  }
  return launch::settings::resolveLaunchSettings(o, config, "c.yaml", machine.facts);
}

launch::plan::LaunchPlan planFor(const std::vector<std::string>& words, const FakeMachine& machine,
                                 const std::string& config_text, launch::settings::Grammar grammar,
                                 const launch::plan::Round& round) {
  return launch::plan::build(settingsFor(words, machine, config_text, grammar), machine.facts, round);
}

Planned launchFor(const std::vector<std::string>& words, const FakeMachine& machine, const std::string& config_text,
                  launch::settings::Grammar grammar) {
  Planned p{settingsFor(words, machine, config_text, grammar), {}};
  p.plan = launch::plan::build(p.settings, machine.facts);
  return p;
}

std::string settingText(const launch::settings::LaunchSettings& s, const std::string& name) {
  for (const auto& row : launch::settings::settingRows(s)) {
    if (row.name == name) return row.value + " (" + row.origin + ")";
  }
  return "<unset>";
}

std::string envOf(const launch::plan::LaunchPlan& plan, const launch::plan::WorkerSpec& worker,
                  const std::string& name) {
  for (const auto& [k, v] : launch::plan::workerEnvironment(plan, worker)) {
    if (k == name) return v;
  }
  return "<unset>";
}

}  // namespace accel::test
