// SPDX-License-Identifier: Apache-2.0
// Whether this `accel launch` starts the other machines itself, and how: DeepSpeed's
// multi-node launchers, as Accelerate's config (deepspeed_multinode_launcher,
// deepspeed_hostfile, deepspeed_inclusion_filter/exclusion_filter) or the flags say.
//
//   pdsh (DeepSpeed's default), standard with accel's --hostfile, or --hostfile in any job (the
//            DeepSpeed keys and Accelerate's --deepspeed_* flags only in a DeepSpeed job of several
//            machines, as Accelerate reads them)
//            -> Ssh: this launcher starts `accel launch` on every selected host (fleet.h);
//   openmpi, mpich, mvapich -> Mpi: one mpirun starts every rank on the hosts;
//   slurm    -> Srun: one `accel launch` per node through srun, inside an allocation;
//   nossh, standard without --hostfile, or one launcher per machine already (SLURM's step,
//            torchrun's PET_*, a Kubernetes pod) -> None: this machine's share only.
//
// A setting that cannot run is refused here, before anything starts (UsageError, exit 2): no
// hostfile for pdsh, a hostfile that does not say what the flags say, pdsh on a machine whose
// rank is not 0, slurm outside an allocation. Where machine 0 is reached is the plan's
// (plan/machine_zero.h); whether the MPI is installed, the facts' (facts.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/launch/settings/hostfile.h"
#include "lib/launch/settings/launch_options.h"
#include "lib/launch/settings/origin.h"

namespace accel::launch::settings {

struct Hosts {
  enum class How { None, Ssh, Mpi, Srun } how = How::None;
  std::string launcher;  // "pdsh", "openmpi", …; "ssh" for --hostfile outside DeepSpeed
  Origin launcher_origin;
  std::string hostfile;  // the file, and where it was named
  Origin hostfile_origin;
  std::vector<HostSlots> selected;  // machine 0 first
  // What every host gets (host_environment.h): ssh's options and the forwarded environment.
  std::vector<std::string> ssh_options;
  std::vector<std::string> ssh_given;  // "--ssh_port 2222", "--ssh_args …", "ACCEL_SSH_ARGS": what the user set
  std::map<std::string, std::string> forwarded;
  std::optional<std::string> include, exclude;  // srun's whole-node filters
  std::vector<std::string> launcher_args;       // --launcher_args: more words for mpirun or srun
  std::string venv_script;                      // --venv_script: each host sources it first (ssh)
  std::vector<std::string> notes;

  int slots() const;  // the processes of the selected hosts
};

struct LaunchSettings;
// After the rest of `s` is resolved. `env`: the launcher's environment (a SLURM allocation, a step).
Hosts resolveHosts(const LaunchSettings& s, const LaunchOptions& o, const std::map<std::string, std::string>& env);

}  // namespace accel::launch::settings
