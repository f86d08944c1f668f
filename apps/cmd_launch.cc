// SPDX-License-Identifier: Apache-2.0
// `accel launch`: the launch prepared from its words (lib/launch/launch.h), what it decided
// said, its plan printed for --dry_run, else run.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "apps/commands.h"
#include "lib/common/cpu_list.h"
#include "lib/common/defaults.h"
#include "lib/common/strings.h"
#include "lib/common/variables.h"
#include "lib/launch/fleet/ssh_command.h"
#include "lib/launch/launch.h"
#include "lib/launch/launch_env.h"
#include "lib/launch/plan/cpu_affinity.h"
#include "lib/launch/plan/worker_env.h"
#include "lib/launch/settings/launch_args.h"

namespace accel {

namespace {

using launch::plan::LaunchPlan;
using launch::settings::LaunchSettings;

// One write a line (std::cerr writes each << apart): a shell or another process writing to the
// same terminal never lands inside it.
void say(const std::string& line) { std::cerr << ("accel: " + line + "\n"); }

std::string quoted(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (const auto& w : words) out.push_back(shellQuote(w));
  return join(out, " ");
}

// Where this machine's place in the job came from: flag, PET_*, pod convention, SLURM, file.
void printPlacement(const LaunchSettings& s, const LaunchPlan& p) {
  const auto& pl = s.placement;
  if (pl.pod) std::cout << "Kubernetes pod convention: " << pl.pod->name << "\n";
  std::cout << fmt::format(
      "placement: num_machines={} ({}), machine_rank={} ({}), main_process_ip={} ({}), main_process_port={} ({}), "
      "nproc_per_node={} ({}), num_processes={} ({})\n",
      pl.num_machines.value, pl.num_machines.origin.text(), pl.machine_rank.value, pl.machine_rank.origin.text(),
      pl.main_process_ip.value, pl.main_process_ip.origin.text(), pl.main_process_port.value,
      pl.main_process_port.origin.text(), pl.nproc_per_node.value, pl.nproc_per_node.origin.text(),
      pl.num_processes.value, pl.num_processes.origin.text());
  if (p.machine_rank < 0)
    std::cout << "machine rank: given out by machine 0 as machines join (ranks below are as machine 0's)\n";
  if (p.etcd) {
    std::cout << fmt::format(
        "machine 0: elected in etcd at {} (a survivor when it is lost); MASTER_ADDR and MASTER_PORT below are "
        "its, given out each round\n",
        p.etcd->server.text());
  }
  if (p.world_at_join) {
    std::cout << "world size: settled at the join from every machine's workers (below: as if each ran "
              << p.workers.size() << ")\n";
  }
}

void printWorkers(const LaunchSettings& s, const LaunchPlan& p) {
  std::cout << fmt::format(
      "accel launch plan: {} worker(s) on machine {} of {}, world size {}, MASTER_ADDR={} MASTER_PORT={}\n",
      p.workers.size(), p.machine_rank, p.num_machines, p.world_size, p.master_addr, p.master_port);
  printPlacement(s, p);
  for (const auto& w : p.workers) {
    std::cout << fmt::format("rank {} (local rank {}): {}\n", w.rank, w.local_rank, quoted(w.argv));
    if (!w.cpus.empty() || w.memory_node >= 0) {
      std::cout << "  (pinned to CPUs " << (w.cpus.empty() ? "-" : cpuListText(w.cpus))
                << (w.memory_node >= 0 ? ", memory preferred on NUMA node " + std::to_string(w.memory_node) : "")
                << ")\n";
    }
    for (const auto& [k, v] : launch::plan::workerEnvironment(p, w)) {
      std::cout << "  " << k << "=" << (launch_env::isSecret(k) ? launch_env::kNotShown : v) << "\n";
    }
    for (const auto& name : p.unset) std::cout << "  (unset " << name << ")\n";
  }
  std::cout << "(each worker also inherits the launcher's environment)\n";
}

// A hostfile host that is this machine starts without ssh; the ssh settings given are named
// when no host uses them.
std::string localNote(const LaunchSettings& s, const LaunchPlan& p) {
  if (s.hosts.ssh_given.empty() || !launch::plan::allLocal(p.hosts)) return " (this machine, no ssh)";
  return " (this machine, no ssh: " + join(s.hosts.ssh_given, " and ") + " not used)";
}

void printFleet(const launch::Launch& l) {
  const LaunchSettings& s = l.settings();
  const LaunchPlan& p = l.plan();
  const auto members = launch::fleet::fleetMembers(p, s, l.facts());
  std::cout << fmt::format(
      "accel launch plan: {} machine(s) from {} ({}), {} process(es), launcher {} ({}), "
      "main_process_ip={} main_process_port={}\n",
      members.size(), s.hosts.hostfile, s.hosts.hostfile_origin.text(), s.hosts.slots(), s.hosts.launcher,
      s.hosts.launcher_origin.text(), p.master_addr, p.master_port);
  for (const auto& m : members) {
    std::cout << fmt::format("machine {}: {}, {} process(es){}{}\n  {}\n", m.machine_rank, m.host, m.orders.place.procs,
                             m.orders.place.gpu_ids.empty() ? "" : ", GPUs " + m.orders.place.gpu_ids,
                             m.local ? localNote(s, p) : "", quoted(m.argv));
  }
  std::vector<std::string> names;
  for (const auto& [name, value] : s.hosts.forwarded) names.push_back(name);
  std::cout << "forwarded to every host: " << (names.empty() ? "-" : join(names, " ")) << "\n";
  std::cout << "(each launcher reads its orders on stdin: the token, that environment, the config file's text "
               "and the launch arguments)\n";
}

void printSettings(const LaunchSettings& s) {
  const auto rows = launch::settings::settingRows(s);
  size_t width = 0;
  for (const auto& r : rows) width = std::max(width, r.name.size());
  say("resolved settings (value, where it came from):");
  for (const auto& r : rows) std::cerr << fmt::format("accel:   {:<{}}  {}  ({})\n", r.name, width, r.value, r.origin);
}

// What the launch decided that the user should know, before it starts anything.
void printDecisions(const launch::Launch& l, bool head_started) {
  const LaunchSettings& s = l.settings();
  const LaunchPlan& p = l.plan();
  for (const auto& note : l.configNotes()) say("note: " + note);
  printWarnings(l.configWarnings());
  if (s.quiet) return;
  const bool head = p.kind != LaunchPlan::Kind::Workers;
  if (!head_started && (!head || s.config_path) && !s.config_line.empty()) say(s.config_line);
  if (!head_started && !head) {
    for (const auto& note : s.notes) say(note);
  }
  for (const auto& note : s.hosts.notes) say("note: " + note);
  if (!head_started) {
    for (const auto& note : p.notes) say(note);
  }
  if (p.kind == LaunchPlan::Kind::Srun) {
    say(fmt::format("{} ({}): one launcher per node through srun: {}", s.hosts.launcher, s.hosts.launcher_origin.text(),
                    quoted(p.srun_argv)));
  }
}

}  // namespace

int runLaunch(const launch::settings::LaunchOptions& options, const launch::fleet::HeadOrders* orders) {
  launch::Launch l(options, orders);
  printDecisions(l, orders != nullptr);
  if (l.settings().keys.flag("debug")) printSettings(l.settings());
  if (!options.dry_run) return l.run();
  switch (l.plan().kind) {
    case LaunchPlan::Kind::Workers: printWorkers(l.settings(), l.plan()); break;
    case LaunchPlan::Kind::Fleet: printFleet(l); break;
    case LaunchPlan::Kind::Srun:
      if (l.settings().quiet) say("one launcher per node through srun: " + quoted(l.plan().srun_argv));
      break;
  }
  return 0;
}

int runLaunchFromHead() {
  const auto orders = launch::fleet::readHeadOrders(0, defaults::kOrdersTimeoutSeconds);
  for (const auto& [name, value] : orders.env) ::setenv(name.c_str(), value.c_str(), 1);
  if (::chdir(orders.cwd.c_str()) != 0) {
    throw UsageError(fmt::format("host {} has no directory {} (the head's working directory): {}", orders.place.host,
                                 orders.cwd, std::strerror(errno)),
                     "give every host the same directories (a shared file system), or start from a directory "
                     "they all have");
  }
  ::setenv(env::kPwd.name(), orders.cwd.c_str(), 1);
  const auto options = launch::settings::parseLaunchArgs(orders.args, launch::settings::Grammar::Launch);
  launch::fleet::watchHeadLink(0);
  return runLaunch(options, &orders);
}

}  // namespace accel
