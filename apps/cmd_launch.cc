// SPDX-License-Identifier: Apache-2.0
// `accel launch`: config + flags + machine facts -> LaunchPlan -> supervised workers.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "apps/commands.h"
#include "lib/common/atomic_file.h"
#include "lib/common/environment.h"
#include "lib/common/error.h"
#include "lib/common/random_bytes.h"
#include "lib/common/socket.h"
#include "lib/common/strings.h"
#include "lib/config/loader.h"
#include "lib/hardware/gpu_probe.h"
#include "lib/hardware/host_probe.h"
#include "lib/launch/cpu_affinity.h"
#include "lib/launch/fleet/host_launch.h"
#include "lib/launch/fleet/mpi_hosts.h"
#include "lib/launch/launch_plan.h"
#include "lib/launch/mpirun.h"
#include "lib/launch/port.h"
#include "lib/launch/program.h"
#include "lib/launch/supervisor.h"
#include "lib/launch/torchrun_args.h"

namespace accel {

namespace {

// One write a line (std::cerr writes each << apart): a shell or another process writing to the
// same terminal never lands inside it.
void say(const std::string& line) { std::cerr << ("accel: " + line + "\n"); }

LaunchFacts gatherFacts() {
  LaunchFacts f;
  GpuReport gpus = probeGpus();
  f.visible_gpus = static_cast<int>(gpus.devices.size());
  f.physical_gpus = gpus.physical_count;
  f.gpu_note = gpus.source.empty() ? "no NVIDIA driver: " + gpus.unavailable_reason : "";
  if (gpus.visible_devices && f.visible_gpus == 0 && !gpus.source.empty()) {
    f.gpu_note = "CUDA_VISIBLE_DEVICES=" + *gpus.visible_devices + " hides them";
  }
  HostReport host = probeHost();
  f.physical_cores = std::max(1, host.physical_cores);
  f.usable_cpus = usableCpus();
  f.hostname = host.hostname;
  f.random_hex = randomHex(16);
  f.token_hex = randomHex(16);
  f.env = processEnvironment();
  // The directory the launcher runs in, which $PWD may not be (a parent that changed directory
  // without updating it): Accelerate takes os.getcwd().
  if (char* cwd = ::getcwd(nullptr, 0)) {
    f.env["PWD"] = cwd;
    std::free(cwd);
  }
  f.names_this_machine = [](const std::string& name) {
    const std::string address = net::resolveIPv4(name);
    return !address.empty() && (net::isLoopback(address) || !net::interfaceOf(address).empty());
  };
  return f;
}

// Where this machine's place in the job came from: flag, PET_*, pod convention, SLURM, file.
void printPlacement(const LaunchPlan& p) {
  const LaunchSettings& s = p.settings;
  if (s.has("pod_convention")) std::cout << "Kubernetes pod convention: " << s.text("pod_convention") << "\n";
  std::vector<std::string> parts;
  for (const char* key :
       {"num_machines", "machine_rank", "main_process_ip", "main_process_port", "nproc_per_node", "num_processes"}) {
    parts.push_back(
        fmt::format("{}={} ({})", key, s.value(key).is_string() ? s.text(key) : s.value(key).dump(), s.origin(key)));
  }
  std::cout << "placement: " << join(parts, ", ") << "\n";
  if (p.machine_rank < 0)
    std::cout << "machine rank: given out by machine 0 as machines join (ranks below are as machine 0's)\n";
  if (p.world_at_join) {
    std::cout << "world size: settled at the join from every machine's workers (below: as if each ran "
              << p.workers.size() << ")\n";
  }
}

void printDryRun(const LaunchPlan& p) {
  std::cout << fmt::format(
      "accel launch plan: {} worker(s) on machine {} of {}, world size {}, "
      "MASTER_ADDR={} MASTER_PORT={}\n",
      p.workers.size(), p.machine_rank, p.num_machines, p.world_size, p.master_addr, p.master_port);
  printPlacement(p);
  for (const auto& w : p.workers) {
    std::vector<std::string> words;
    for (const auto& a : w.argv) words.push_back(shellQuote(a));
    std::cout << fmt::format("rank {} (local rank {}): {}\n", w.rank, w.local_rank, join(words, " "));
    if (!w.cpus.empty()) std::cout << "  (pinned to CPUs " << cpuListText(w.cpus) << ")\n";
    for (const auto& [k, v] : w.env) std::cout << "  " << k << "=" << v << "\n";
    for (const auto& name : w.unset) std::cout << "  (unset " << name << ")\n";
  }
  std::cout << "(each worker also inherits the launcher's environment)\n";
}

void printSettings(const LaunchSettings& s) {
  size_t width = 0;
  for (const auto& [k, v] : s.all()) width = std::max(width, k.size());
  say("resolved settings (value, where it came from):");
  for (const auto& [k, v] : s.all()) {
    std::string value = v.value.is_null() ? "-" : v.value.is_string() ? v.value.get<std::string>() : v.value.dump();
    if (k == "rdzv_token" && !v.value.is_null()) value = "(set, not shown)";
    std::cerr << fmt::format("accel:   {:<{}}  {}  ({})\n", k, width, value, v.origin);
  }
}

// On machine rank 0: the configured port must be free before rank 0's store tries to bind it.
void settlePort(LaunchPlan& plan, bool quiet) {
  if (!plan.port_is_ours) return;
  const int port = plan.master_port;
  if (port == 0) {
    if (plan.num_machines > 1) {
      throw UsageError(
          "main_process_port 0 (pick a free port) cannot work across machines: the "
          "others cannot know which port was picked",
          "pass the same --main_process_port on every machine");
    }
    setMasterPort(plan, pickFreePort());
    if (!quiet) say(fmt::format("main_process_port 0: using free port {}", plan.master_port));
    return;
  }
  if (portIsFree(port)) return;
  std::string holder = portHolder(port);
  std::string who = holder.empty() ? "" : " (held by " + holder + ")";
  if (plan.num_machines > 1) {
    throw Error(fmt::format("port {} on this machine is busy{}; the other machines will connect to it", port, who),
                "stop that process, or pass another --main_process_port on every machine");
  }
  setMasterPort(plan, pickFreePort());
  if (!quiet) say(fmt::format("port {} is busy{}; using free port {}", port, who, plan.master_port));
}

// torchrun's --local_addr: this machine's address for the job, whose interface the workers use.
void useLocalAddress(LaunchPlan& plan, const LaunchFacts& facts) {
  const std::string given = plan.settings.text("local_addr");
  const std::string address = net::resolveIPv4(given);
  const std::string iface = address.empty() ? "" : net::interfaceOf(address);
  if (iface.empty()) {
    throw UsageError(fmt::format("--local_addr {} ({}) is not an address of this machine ({})", given,
                                 plan.settings.origin("local_addr"), plan.host),
                     "give one of: " + join(net::ownAddresses(), ", "));
  }
  setSocketInterface(plan, iface, address, facts.env);
}

// Several machines: machine 0 hosts the store at main_process_ip, so that must be one of its own
// addresses; on every machine the workers use the interface that reaches it. A dry run may be
// planning for another machine, so there the refusal is a warning.
void checkNetwork(LaunchPlan& plan, const LaunchFacts& facts, bool dry_run) {
  const std::string resolved = net::resolveIPv4(plan.master_addr);
  const std::string& origin = plan.settings.origin("main_process_ip");
  // A pod's peers' names resolve only once their pods run: there the launcher goes on and
  // retries; anywhere else a name that does not resolve is a mistake, said at once.
  const bool from_pod = plan.settings.has("pod_convention") || startsWith(origin, "PET_");
  if (resolved.empty() && !from_pod) {
    UsageError error(fmt::format("main_process_ip {} ({}) does not resolve to an address", plan.master_addr, origin),
                     "give machine 0's address or a host name this machine resolves (see /etc/hosts, `getent hosts`)");
    if (!dry_run) throw error;
    say(fmt::format("warning: {} (a launch without --dry_run refuses this; {})", error.what(), error.hint()));
  } else if (resolved.empty()) {
    say(
        fmt::format("note: main_process_ip {} ({}) does not resolve yet; a pod's name resolves once its pod runs, so "
                    "this launcher goes on and keeps trying until the join timeout",
                    plan.master_addr, origin));
  }
  if (plan.settings.has("local_addr")) return useLocalAddress(plan, facts);
  if (plan.machine_rank == 0 && !resolved.empty() && net::interfaceOf(resolved).empty()) {
    UsageError error(
        fmt::format("main_process_ip {}{} is not an address of this machine ({}), but machine 0 hosts the "
                    "store and the job channel there",
                    plan.master_addr, resolved.empty() || resolved == plan.master_addr ? "" : " (" + resolved + ")",
                    plan.host),
        "pass one of this machine's addresses that the others reach: " + join(net::ownAddresses(), ", "));
    if (!dry_run) throw error;
    say(fmt::format("warning: {} (a launch without --dry_run refuses this; {})", error.what(), error.hint()));
  }
  const net::Route route = net::routeTowards(plan.master_addr);
  if (!route.interface.empty()) setSocketInterface(plan, route.interface, route.address, facts.env);
}

// A file Accelerate reads but accel cannot launch from: values no launch can use, a SageMaker
// job (Accelerate starts those through SageMaker's API).
void refuseUnlaunchable(const LoadResult& loaded) {
  if (!loaded.problems.empty()) throw ConfigError(loaded.problems);
  if (loaded.config.sageMaker()) {
    throw ConfigError({{loaded.config.where("compute_environment"),
                        "compute_environment AMAZON_SAGEMAKER: accel does not launch SageMaker jobs",
                        "launch it with `accelerate launch`, which starts it through SageMaker, or use "
                        "compute_environment LOCAL_MACHINE to launch here"}});
  }
}

// A file of this launch's, removed when it ends.
struct TemporaryFile {
  std::string path;
  TemporaryFile() = default;
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  ~TemporaryFile() {
    if (!path.empty()) ::unlink(path.c_str());
  }
};

// The config file a launch reads: the one named, else the default unless --cpu or torchrun;
// a head's orders carry the text it read.
std::optional<Config> launchConfig(const LaunchOptions& o, const HeadOrders* orders, const std::string& looked_at) {
  std::optional<LoadResult> loaded;
  if (orders) {
    if (orders->config_text) loaded = parseConfigText(*orders->config_text, orders->config_path.value_or("?"));
  } else if (!o.torchrun && (!o.config_file.empty() || (!o.cpu && fileExists(looked_at)))) {
    loaded = loadConfigFile(looked_at);  // a named file that is missing is an error
  }
  if (!loaded) return std::nullopt;
  if (!orders) {
    for (const auto& note : loaded->notes) say("note: " + note);
    printWarnings(loaded->warnings);
  }
  refuseUnlaunchable(*loaded);
  return std::move(loaded->config);
}

}  // namespace

int runLaunch(const LaunchOptions& typed, const std::vector<std::string>& args, const HeadOrders* orders) {
  LaunchFacts facts = gatherFacts();
  if (orders) facts.hostname = orders->host;
  LaunchOptions o = typed;
  applyTorchrunEnv(o, facts.env);  // PET_MODULE, PET_NO_PYTHON: the program's form
  const std::string looked_at = o.config_file.empty() ? defaultConfigPath() : o.config_file;
  const bool looked_at_exists = fileExists(looked_at);
  std::optional<Config> config = launchConfig(o, orders, looked_at);
  facts.default_config_exists = o.config_file.empty() && looked_at_exists;
  facts.stdin_terminal = !orders && ::isatty(0) == 1;
  LaunchSettings settings = resolveLaunchSettings(o, config, looked_at, facts);
  const HostLaunch hosts = planHostLaunch(settings, o, facts.env);
  if (hosts.how == HostLaunch::How::Ssh || hosts.how == HostLaunch::How::Srun) {
    if (!o.quiet && settings.config_path) say(settings.config_line);  // the head's own defaults do not apply
    return hosts.how == HostLaunch::How::Ssh ? launchFleet(hosts, settings, o, facts, config, args)
                                             : launchThroughSrun(hosts, settings, o, args);
  }
  TemporaryFile mpi_hostfile;
  std::optional<Mpirun> mpi;
  if (hosts.how == HostLaunch::How::Mpi) {
    mpi = findMpiFor(hosts.launcher, facts.env["PATH"]);
    mpi_hostfile.path = mpiHostfile(hosts, *mpi, facts);
    settings.set("mpirun_config.mpirun_hostfile", mpi_hostfile.path, hosts.launcher + " over " + hosts.hostfile);
  }
  ProgramOptions program{o.module, o.no_python, o.python, facts.env["PATH"]};
  LaunchPlan plan = makeLaunchPlan(std::move(settings), resolveProgram(o.command, program), facts);
  if (mpi) {
    launchThroughMpi(plan, hosts, o, facts, mpi_hostfile.path, *mpi);
  } else if (plan.settings.has("mpirun_config.mpirun_hostfile")) {
    runThroughMpirun(plan, findMpirun(facts.env["PATH"]), ::geteuid() == 0);
  }
  if (plan.num_machines > 1 && !net::isLoopback(plan.master_addr) && !mpi) checkNetwork(plan, facts, o.dry_run);
  if (!o.quiet && !orders) {
    if (!plan.settings.config_line.empty()) say(plan.settings.config_line);
    for (const auto& note : plan.settings.notes) say(note);
  }
  if (!o.quiet) {
    for (const auto& note : hosts.notes) say("note: " + note);
  }
  if (plan.settings.flag("debug")) printSettings(plan.settings);
  if (o.dry_run) {
    printDryRun(plan);
    return 0;
  }
  settlePort(plan, o.quiet);
  if (orders) std::cout << kLauncherReady << std::endl;
  return superviseWorkers(plan);
}

}  // namespace accel
