// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/launch.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "lib/common/atomic_file.h"
#include "lib/common/error.h"
#include "lib/common/temporary_folder.h"
#include "lib/common/variables.h"
#include "lib/config/config.h"
#include "lib/launch/facts/program.h"
#include "lib/launch/facts/system_facts.h"
#include "lib/launch/fleet/fleet.h"
#include "lib/launch/plan/build.h"
#include "lib/launch/plan/mpi_hosts.h"
#include "lib/launch/supervise/supervisor.h"

namespace accel::launch {

struct Launch::Owned {
  std::unique_ptr<facts::SystemNetwork> network = std::make_unique<facts::SystemNetwork>();
  std::unique_ptr<facts::SystemPrograms> programs;
  std::string mpi_folder;  // where the MPI hostfile is, removed with it
  ~Owned() {
    if (mpi_folder.empty()) return;
    ::unlink((mpi_folder + "/hostfile").c_str());
    ::rmdir(mpi_folder.c_str());
  }
};

namespace {

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

// The config file a launch reads: the one named, else the default unless --cpu or torchrun; a
// head's orders carry the text it read.
std::optional<LoadResult> loadLaunchConfig(const settings::LaunchOptions& o, const fleet::HeadOrders* orders,
                                           const std::string& looked_at) {
  if (orders) {
    if (!orders->config_text) return std::nullopt;
    return parseConfigText(*orders->config_text, orders->config_path.value_or("?"));
  }
  if (o.torchrun || o.deepspeed_env || (o.config_file.empty() && (o.cpu || !fileExists(looked_at)))) {
    return std::nullopt;  // torchrun and DeepSpeed's launcher read no config file
  }
  return loadConfigFile(looked_at);  // a named file that is missing is an error
}

// DeepSpeed's MPI launchers read the selection from a hostfile of their own format, written
// here before the plan names it; returns its folder (private to this user).
std::string writeMpiHostfile(const settings::LaunchSettings& s, const facts::Facts& f, std::string& path) {
  const facts::Mpi mpi = f.programs->mpirun(s.hosts.launcher);
  const std::string folder = makeTemporaryFolder("accel-mpi-hosts-");
  path = folder + "/hostfile";
  writeFileAtomic(path, plan::mpiHostfileText(s.hosts, mpi));
  return folder;
}

}  // namespace

Launch::Launch(const settings::LaunchOptions& options, const fleet::HeadOrders* orders)
    : owned_(std::make_unique<Owned>()), orders_(orders) {
  facts_.machine = facts::gatherMachine(orders ? orders->place.host : "");
  if (orders) facts_.machine.stdin_terminal = false;
  owned_->programs = std::make_unique<facts::SystemPrograms>(env::kPath.in(facts_.machine.env));
  facts_.network = owned_->network.get();
  facts_.programs = owned_->programs.get();
  facts_.cpu_topology = [this] {
    std::vector<std::string> addresses;
    for (const auto& gpu : facts_.machine.gpus) addresses.push_back(facts::pciAddress(gpu.pci_bus_id));
    return facts::readCpuTopology("/sys", addresses);
  };
  settings::LaunchOptions o = options;
  settings::applyTorchrunEnv(o, facts_.machine.env);  // PET_MODULE, PET_NO_PYTHON: the program's form
  const std::string looked_at = o.config_file.empty() ? defaultConfigPath() : o.config_file;
  facts_.machine.default_config_exists = o.config_file.empty() && fileExists(looked_at);
  std::optional<Config> config;
  if (auto loaded = loadLaunchConfig(o, orders, looked_at)) {
    if (!orders) {
      config_notes_ = loaded->notes;
      config_warnings_ = loaded->warnings;
    }
    refuseUnlaunchable(*loaded);
    config = std::move(loaded->config);
  }
  settings_ = settings::resolveLaunchSettings(o, config, looked_at, facts_, orders ? &orders->place : nullptr);
  if (settings_.hosts.how == settings::Hosts::How::Mpi) {
    owned_->mpi_folder = writeMpiHostfile(settings_, facts_, facts_.mpi_hostfile);
  }
  if (settings_.hosts.how == settings::Hosts::How::None || settings_.hosts.how == settings::Hosts::How::Mpi) {
    facts_.program = facts::resolveProgram(settings_.command, settings_.program_form);
  }
  plan_ = plan::build(settings_, facts_);
}

Launch::~Launch() = default;

int Launch::run() {
  switch (plan_.kind) {
    case plan::LaunchPlan::Kind::Fleet: return fleet::runHead(plan_, settings_, facts_);
    case plan::LaunchPlan::Kind::Srun: {
      std::vector<char*> args;
      for (const auto& a : plan_.srun_argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      throw UsageError(fmt::format("cannot run srun: {}", std::strerror(errno)),
                       "SLURM's srun must be on PATH inside the allocation");
    }
    case plan::LaunchPlan::Kind::Workers: break;
  }
  if (orders_) std::cout << fleet::kLauncherReady << std::endl;
  return supervise::superviseWorkers(settings_, facts_, plan_);
}

}  // namespace accel::launch
