// SPDX-License-Identifier: Apache-2.0
// Where every machine reaches machine 0, decided in one place for every kind of launch: the
// address (MASTER_ADDR, where rank 0 hosts the store and machine 0's launcher the job channel),
// the round's port, and the interface this machine reaches it through (its workers'
// GLOO_SOCKET_IFNAME and NCCL_SOCKET_IFNAME).
//   - one machine, or several on loopback: main_process_ip as the settings say;
//   - several machines, this one's launcher only: machine 0 must hold main_process_ip (it hosts
//     the store there), every machine reaches it through the interface of its route, or of
//     torchrun's --local_addr; a name that does not resolve is refused (a pod's peers resolve
//     only once they run: there it is a note, and the launcher keeps trying);
//   - a hostfile head: main_process_ip where given, else the first host, which when it names
//     this machine by loopback (a Debian host's own name is 127.0.1.1) becomes the address its
//     route towards the other hosts leaves from, as DeepSpeed asks the first host for `hostname -I`;
//   - DeepSpeed's MPI launchers: the first host, where rank 0 runs;
//   - the port: a round's own where machine 0 gave one; else, on machine 0 and outside a dry run,
//     the configured port when free, else (one machine only) a free one; 0 picks a free one.
// Refusals are UsageError (a dry run, which may be planning for another machine, notes them as
// warnings instead); a busy port across machines is an Error.
#pragma once

#include <string>
#include <vector>

#include "lib/launch/facts/facts.h"
#include "lib/launch/settings/launch_settings.h"

namespace accel::launch::plan {

struct MachineZero {
  std::string address;
  int port = 0;
  std::string interface;                      // this machine's towards it ("" where none is named)
  std::vector<std::string> socket_variables;  // GLOO/NCCL_SOCKET_IFNAME the workers get from it
  std::vector<std::string> notes;
};

// `round_port`: the round's MASTER_PORT as machine 0 gave it (0: none yet).
MachineZero reachMachineZero(const settings::LaunchSettings& s, const facts::Facts& f, int round_port);

}  // namespace accel::launch::plan
