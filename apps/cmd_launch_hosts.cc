// SPDX-License-Identifier: Apache-2.0
// `accel launch` across a hostfile's machines: the head (launchFleet) and each machine's
// launcher that it starts (runLaunchFromHead). lib/launch/fleet holds the parts.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "apps/commands.h"
#include "lib/common/atomic_file.h"
#include "lib/common/defaults.h"
#include "lib/common/environment.h"
#include "lib/common/socket.h"
#include "lib/common/strings.h"
#include "lib/launch/fleet/fleet.h"
#include "lib/launch/fleet/mpi_hosts.h"
#include "lib/launch/launch_env.h"

namespace accel {

namespace {

std::string envOr(const LaunchFacts& facts, const char* name, const std::string& fallback) {
  auto it = facts.env.find(name);
  return it == facts.env.end() || it->second.empty() ? fallback : it->second;
}

std::string settingOr(const LaunchSettings& s, const char* key, const std::string& fallback) {
  return s.has(key) && s.value(key).is_string() && !s.text(key).empty() ? s.text(key) : fallback;
}

void printFleet(const HostLaunch& h, const std::vector<FleetMember>& members) {
  std::cout << fmt::format(
      "accel launch plan: {} machine(s) from {} ({}), {} process(es), launcher {} ({}), "
      "main_process_ip={} main_process_port={}\n",
      members.size(), h.hostfile, h.hostfile_origin, slotCount(h), h.launcher, h.launcher_origin, h.main_addr,
      h.main_port);
  for (const auto& m : members) {
    std::vector<std::string> words;
    for (const auto& a : m.argv) words.push_back(shellQuote(a));
    std::cout << fmt::format("machine {}: {}, {} process(es){}{}\n  {}\n", m.machine_rank, m.host, m.orders.procs,
                             m.orders.gpu_ids.empty() ? "" : ", GPUs " + m.orders.gpu_ids,
                             m.local ? " (this machine, no ssh)" : "", join(words, " "));
  }
  std::vector<std::string> names;
  for (const auto& [name, value] : members.front().orders.env) names.push_back(name);
  std::cout << "forwarded to every host: " << (names.empty() ? "-" : join(names, " ")) << "\n";
  std::cout << "(each launcher reads its orders on stdin: the token, that environment, the config file's text "
               "and the launch arguments)\n";
}

FleetFacts fleetFacts(const LaunchSettings& s, const LaunchFacts& facts, const std::optional<Config>& config,
                      const std::vector<std::string>& args) {
  FleetFacts f;
  f.env = facts.env;
  f.self = selfExecutable();
  f.cwd = envOr(facts, "PWD", ".");
  f.home = envOr(facts, launch_env::kHome, "");
  f.args = args;
  if (config) {
    f.config_path = config->path;
    f.config_text = readFile(config->path);
  }
  f.token = settingOr(s, "rdzv_token", envOr(facts, launch_env::kStoreToken, facts.token_hex));
  f.run_id = settingOr(s, "rdzv_id", envOr(facts, launch_env::kAccelRunId, "accel-" + facts.random_hex.substr(0, 16)));
  f.is_this_machine = facts.names_this_machine;
  f.heartbeat_timeout = s.value("heartbeat_timeout").get<double>();
  return f;
}

// Machine 0's address is where every host connects. A hostfile's name that resolves to loopback here (a
// Debian host's own name is 127.0.1.1 in /etc/hosts) is replaced, when machine 0 is this machine,
// by the address its route towards another host leaves from, as DeepSpeed asks the first host
// for `hostname -I`; where that is not known either, the launch is refused.
HostLaunch reachableMain(HostLaunch h, const LaunchFacts& facts) {
  const std::string address = net::resolveIPv4(h.main_addr);
  if (address.empty() || !net::isLoopback(address)) return h;
  auto here = [&](const std::string& host) { return facts.names_this_machine && facts.names_this_machine(host); };
  for (const auto& other : h.hosts) {
    if (here(other.host)) continue;
    const net::Route route = here(h.main_addr) && !h.main_given ? net::routeTowards(other.host) : net::Route{};
    if (route.address.empty() || net::isLoopback(route.address)) {
      throw UsageError(fmt::format("the main address {} ({}) is a loopback address, which {} cannot reach machine 0 "
                                   "at",
                                   h.main_addr, address, other.host),
                       "list machine 0 in the hostfile by a name or address the other hosts reach, or give "
                       "--main_process_ip");
    }
    h.notes.push_back(
        fmt::format("{} is {} here (loopback): the other hosts reach machine 0 at {}, where its route "
                    "towards {} leaves ({})",
                    h.main_addr, address, route.address, other.host, route.interface));
    h.main_addr = route.address;
    return h;
  }
  return h;
}

}  // namespace

int launchFleet(const HostLaunch& h, const LaunchSettings& s, const LaunchOptions& o, const LaunchFacts& facts,
                const std::optional<Config>& config, const std::vector<std::string>& args) {
  const HostLaunch hosts = reachableMain(h, facts);
  const auto members = fleetMembers(hosts, o.ssh_port, o.ssh_args, fleetFacts(s, facts, config, args));
  if (!o.quiet) {
    for (const auto& note : hosts.notes) std::cerr << "accel: note: " << note << "\n";
  }
  if (o.dry_run) {
    printFleet(hosts, members);
    return 0;
  }
  const FleetTimes times{s.value("grace_period").get<double>(), s.value("heartbeat_timeout").get<double>()};
  return runFleet(members, times, o.quiet);
}

int launchThroughSrun(const HostLaunch& h, const LaunchSettings& s, const LaunchOptions& o,
                      const std::vector<std::string>& args) {
  const std::string nodes = std::to_string(s.integer("num_machines"));
  std::vector<std::string> argv = {"srun", "--nodes=" + nodes, "--ntasks=" + nodes, "--ntasks-per-node=1",
                                   "--kill-on-bad-exit=1"};
  std::vector<std::string> only, except;
  for (const auto& [filter, names] : {std::pair{o.include, &only}, std::pair{o.exclude, &except}}) {
    if (!filter) continue;
    for (const auto& entry : split(*filter, '@')) names->push_back(split(entry, ':').front());
  }
  // srun picks nodes, not GPUs: a filter's slots, --num_gpus and --num_nodes cannot pass.
  const bool slots = (o.include && o.include->find(':') != std::string::npos) ||
                     (o.exclude && o.exclude->find(':') != std::string::npos);
  if (slots || o.num_gpus || o.num_nodes) {
    throw UsageError(fmt::format("{} ({}) gives srun whole nodes: {} cannot apply", h.launcher, h.launcher_origin,
                                 slots        ? "a filter's slots (HOST:0,1)"
                                 : o.num_gpus ? "--num_gpus"
                                              : "--num_nodes"),
                     "filter whole nodes (--include h1@h2, --exclude h3), or ask SLURM for the GPUs (--gpus-per-node)");
  }
  if (!only.empty()) argv.push_back("--nodelist=" + join(only, ","));
  if (!except.empty()) argv.push_back("--exclude=" + join(except, ","));
  argv.insert(argv.end(), {selfExecutable(), "launch"});
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> words;
  for (const auto& a : argv) words.push_back(shellQuote(a));
  if (!o.quiet || o.dry_run) {
    std::cerr << fmt::format("accel: {} ({}): one launcher per node through srun: {}\n", h.launcher, h.launcher_origin,
                             join(words, " "));
  }
  if (o.dry_run) return 0;
  std::vector<char*> cargs;
  for (auto& a : argv) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  ::execvp(cargs[0], cargs.data());
  throw UsageError(fmt::format("cannot run srun: {}", ::strerror(errno)),
                   "SLURM's srun must be on PATH inside the allocation");
}

std::string mpiHostfile(const HostLaunch& h, const Mpirun& mpi, const LaunchFacts& facts) {
  const std::string dir = envOr(facts, launch_env::kTmpDir, "/tmp");
  std::string path = dir + "/accel-mpi-hosts-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) throw Error(fmt::format("cannot create a hostfile in {}: {}", dir, ::strerror(errno)), "set TMPDIR");
  const std::string text = mpiHostfileText(h, mpi);
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written) throw Error(fmt::format("cannot write {}: {}", path, ::strerror(errno)), "");
  return path;
}

void launchThroughMpi(LaunchPlan& plan, const HostLaunch& h, const LaunchOptions& o, const LaunchFacts& facts,
                      const std::string& hostfile, const Mpirun& mpi) {
  FleetFacts f = fleetFacts(plan.settings, facts, std::nullopt, {});
  std::vector<std::string> forwarded;
  for (const auto& [name, value] : forwardedEnvironment(f)) {
    if (!facts.env.count(name) || facts.env.at(name) != value) ::setenv(name.c_str(), value.c_str(), 1);
    forwarded.push_back(name);
  }
  runHostsThroughMpirun(plan, mpi, h, hostfile, sshOptions(o.ssh_port, o.ssh_args, f), forwarded, ::geteuid() == 0);
  plan.num_machines = 1;  // one launcher, this one: mpirun's ranks need no job channel
  plan.world_size = slotCount(h);
  plan.world_at_join = false;
  plan.label_host.clear();
}

int runLaunchFromHead() {
  const HeadOrders orders = readHeadOrders(0, defaults::kOrdersTimeoutSeconds);
  for (const auto& [name, value] : orders.env) ::setenv(name.c_str(), value.c_str(), 1);
  if (::chdir(orders.cwd.c_str()) != 0) {
    throw UsageError(fmt::format("host {} has no directory {} (the head's working directory): {}", orders.host,
                                 orders.cwd, ::strerror(errno)),
                     "give every host the same directories (a shared file system), or start from a directory "
                     "they all have");
  }
  ::setenv("PWD", orders.cwd.c_str(), 1);
  LaunchOptions o = ordersToOptions(orders);
  o.stdin_rank = "none";
  watchHeadLink(0);
  return runLaunch(o, {}, &orders);
}

}  // namespace accel
