// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/plan/machine_zero.h"

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"

namespace accel::launch::plan {

namespace {

using settings::Hosts;
using settings::Source;

// A refusal, or in a dry run a warning note.
void refuse(MachineZero& z, const settings::LaunchSettings& s, UsageError error) {
  if (!s.dry_run) throw error;
  z.notes.push_back(
      fmt::format("warning: {} (a launch without --dry_run refuses this; {})", error.what(), error.hint()));
}

// The interface `iface` (holding `local`) becomes the workers' socket interface, except where
// the launcher's environment or --env names one.
void useInterface(MachineZero& z, const settings::LaunchSettings& s, const facts::Facts& f, const std::string& iface,
                  const std::string& local) {
  z.interface = iface;
  std::vector<std::string> kept;
  for (const char* name : {launch_env::kGlooSocketIfname, launch_env::kNcclSocketIfname}) {
    const std::string own = f.machine.variable(name);
    bool by_env = false;
    for (const auto& a : s.supervision.env) by_env = by_env || startsWith(a, std::string(name) + "=");
    if (!own.empty()) kept.push_back(fmt::format("{}={}", name, own));
    if (own.empty() && !by_env) z.socket_variables.push_back(name);
  }
  std::string note =
      fmt::format("network: this machine reaches main_process_ip {} from {} on {}", z.address, local, iface);
  if (!z.socket_variables.empty()) note += "; workers get " + join(z.socket_variables, " and ") + "=" + iface;
  if (!kept.empty()) note += "; kept from the environment: " + join(kept, ", ");
  z.notes.push_back(note);
}

// torchrun's --local_addr: this machine's address for the job, whose interface the workers use.
void useLocalAddress(MachineZero& z, const settings::LaunchSettings& s, const facts::Facts& f) {
  const auto& given = s.torchrun.local_addr;
  const std::string address = f.network->resolve(*given.value);
  const std::string iface = address.empty() ? "" : f.network->interfaceOf(address);
  if (iface.empty()) {
    throw UsageError(fmt::format("--local_addr {} ({}) is not an address of this machine ({})", *given.value,
                                 given.origin.text(), f.machine.hostname),
                     "give one of: " + join(f.network->ownAddresses(), ", "));
  }
  useInterface(z, s, f, iface, address);
}

// Several machines, each with its own launcher: see machine_zero.h.
void checkNetwork(MachineZero& z, const settings::LaunchSettings& s, const facts::Facts& f) {
  const auto& ip = s.placement.main_process_ip;
  const std::string resolved = f.network->resolve(z.address);
  // A pod's peers' names resolve only once their pods run: there the launcher goes on and
  // retries; anywhere else a name that does not resolve is a mistake, said at once.
  const bool from_pod = s.placement.pod || ip.origin.source == Source::Torchrun;
  if (resolved.empty() && !from_pod) {
    refuse(
        z, s,
        UsageError(fmt::format("main_process_ip {} ({}) does not resolve to an address", z.address, ip.origin.text()),
                   "give machine 0's address or a host name this machine resolves (see /etc/hosts, "
                   "`getent hosts`)"));
  } else if (resolved.empty()) {
    z.notes.push_back(
        fmt::format("note: main_process_ip {} ({}) does not resolve yet; a pod's name resolves once its "
                    "pod runs, so this launcher goes on and keeps trying until the join timeout",
                    z.address, ip.origin.text()));
  }
  if (s.torchrun.local_addr.value) return useLocalAddress(z, s, f);
  if (s.placement.machine_rank.value == 0 && !resolved.empty() && f.network->interfaceOf(resolved).empty()) {
    refuse(z, s,
           UsageError(
               fmt::format("main_process_ip {}{} is not an address of this machine ({}), but machine 0 hosts "
                           "the store and the job channel there",
                           z.address, resolved == z.address ? "" : " (" + resolved + ")", f.machine.hostname),
               "pass one of this machine's addresses that the others reach: " + join(f.network->ownAddresses(), ", ")));
  }
  const net::Route route = f.network->routeTowards(z.address);
  if (!route.interface.empty()) useInterface(z, s, f, route.interface, route.address);
}

// What to give instead of a loopback main address: this machine's addresses that others reach.
std::string reachableHint(const facts::Facts& f) {
  const std::vector<std::string> own = f.network->ownAddresses();
  if (own.empty()) {
    return "this machine has no address but loopback: connect it to the other hosts' network, then list it in "
           "the hostfile by that address";
  }
  return "list machine 0 in the hostfile by a name or address the other hosts reach, or give --main_process_ip "
         "one of this machine's: " +
         join(own, ", ");
}

// A hostfile head: machine 0's address as every host can reach it.
void reachableFromHosts(MachineZero& z, const settings::LaunchSettings& s, const facts::Facts& f) {
  const auto& ip = s.placement.main_process_ip;
  const bool given = !ip.value.empty() && ip.origin.source != Source::Default;
  const std::vector<settings::HostSlots>& hosts = s.hosts.selected;
  z.address = given ? ip.value : hosts.front().host;     // DeepSpeed: the first host
  if (s.hosts.how == settings::Hosts::How::Mpi) return;  // mpirun starts rank 0 there
  const std::string address = f.network->resolve(z.address);
  if (address.empty() || !net::isLoopback(address)) return;
  for (const auto& other : hosts) {
    if (f.network->namesThisMachine(other.host)) continue;
    const net::Route route =
        f.network->namesThisMachine(z.address) && !given ? f.network->routeTowards(other.host) : net::Route{};
    if (route.address.empty() || net::isLoopback(route.address)) {
      throw UsageError(fmt::format("the main address {} ({}) is a loopback address, which {} cannot reach machine 0 "
                                   "at",
                                   z.address, address, other.host),
                       reachableHint(f));
    }
    z.notes.push_back(
        fmt::format("note: {} is {} here (loopback): the other hosts reach machine 0 at {}, where its "
                    "route towards {} leaves ({})",
                    z.address, address, route.address, other.host, route.interface));
    z.address = route.address;
    return;
  }
}

// Machine 0's port for round 0: the configured one when free; else, on one machine, a free one.
// `several`: other machines' launchers will connect to it (an mpirun's ranks are this launcher's).
void settlePort(MachineZero& z, const settings::LaunchSettings& s, const facts::Facts& f, bool several) {
  if (s.dry_run) return;
  const auto& configured = s.placement.main_process_port;
  if (z.port == 0 && several) {
    throw UsageError(
        "main_process_port 0 (pick a free port) cannot work across machines: the "
        "others cannot know which port was picked",
        "pass the same --main_process_port on every machine");
  }
  if (z.port == 0) {
    z.port = f.network->freePort();
    return z.notes.push_back(fmt::format("main_process_port 0: using free port {}", z.port));
  }
  if (f.network->portIsFree(z.port)) return;
  const std::string holder = f.network->portHolder(z.port);
  const std::string who = holder.empty() ? "" : " (held by " + holder + ")";
  if (several) {
    throw Error(fmt::format("port {} on this machine is busy{}; the other machines will connect to it", z.port, who),
                "stop that process, or pass another --main_process_port on every machine");
  }
  z.port = f.network->freePort();
  z.notes.push_back(fmt::format("port {} is busy{}; using free port {}", configured.value, who, z.port));
}

}  // namespace

MachineZero reachMachineZero(const settings::LaunchSettings& s, const facts::Facts& f, int round_port) {
  MachineZero z;
  z.address = s.placement.main_process_ip.value;
  z.port = static_cast<int>(s.placement.main_process_port.value);
  if (s.hosts.how == settings::Hosts::How::Srun) return z;  // each node's launcher decides
  if (s.hosts.how == settings::Hosts::How::Ssh) {
    reachableFromHosts(z, s, f);
    return z;  // each host's launcher settles the rest
  }
  const bool mpi = s.hosts.how == settings::Hosts::How::Mpi;
  if (mpi) reachableFromHosts(z, s, f);
  const bool mpirun = mpi || s.keys.has("mpirun_config.mpirun_hostfile");
  const bool several = s.placement.num_machines.value > 1 && !mpi;
  if (several && !net::isLoopback(z.address) && !mpirun) checkNetwork(z, s, f);
  if (round_port > 0) {
    z.port = round_port;
  } else if (s.placement.machine_rank.value == 0) {
    settlePort(z, s, f, several);
  }
  return z;
}

}  // namespace accel::launch::plan
