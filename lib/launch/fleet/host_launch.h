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
// rank is not 0, an MPI that is not installed, slurm outside an allocation.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "lib/launch/hostfile.h"
#include "lib/launch/launch_options.h"
#include "lib/launch/launch_settings.h"

namespace accel {

struct HostLaunch {
  enum class How { None, Ssh, Mpi, Srun } how = How::None;
  std::string launcher;  // "pdsh", "openmpi", …; "ssh" for --hostfile outside DeepSpeed
  std::string launcher_origin;
  std::string hostfile;  // the file, and where it was named
  std::string hostfile_origin;
  std::vector<HostSlots> hosts;  // the selected hosts, machine 0 first
  std::string main_addr;         // machine 0's address for the others
  bool main_given = false;       // by main_process_ip (else the first host's name)
  int main_port = 0;
  std::vector<std::string> notes;
};

// `env`: the launcher's environment (a SLURM allocation, a step).
HostLaunch planHostLaunch(const LaunchSettings& s, const LaunchOptions& o,
                          const std::map<std::string, std::string>& env);

// The processes of the selected hosts.
int slotCount(const HostLaunch& h);

}  // namespace accel
