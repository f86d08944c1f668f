// SPDX-License-Identifier: Apache-2.0
// How the head reaches each selected host: the command that starts that host's `accel launch
// --from_head`, and the orders it writes on its stdin (head_orders.h).
//
//   - A host that names this machine runs this accel directly, without ssh.
//   - Any other runs through OpenSSH in batch mode (never a password prompt), with the user's own
//     configuration and keys: `ssh -o BatchMode=yes [-p PORT] [SSH_ARGS…] HOST COMMAND`, where
//     SSH_ARGS are --ssh_args or $ACCEL_SSH_ARGS (DeepSpeed's PDSH_SSH_ARGS_APPEND), split as a
//     shell would, then ConnectTimeout, ServerAliveInterval=1 and ServerAliveCountMax from the
//     heartbeat timeout: a host that does not answer, or whose network went silent, ends its ssh
//     as the job's channel ends its launcher (the user's own -o options come first and so win).
//     accel never stores nor passes a credential.
//   - COMMAND runs this accel's path on the host, else `accel` on the host's PATH, else says
//     neither is there (exit 127); $ACCEL_REMOTE_ACCEL names another path.
//   - The forwarded environment is DeepSpeed's: the variables whose names start with NCCL,
//     PYTHON, UCX, MV2 or MLFLOW, accel's ACCEL_* (not the token: the orders carry it), PYTHONPATH
//     with the working directory first, then every KEY=VALUE line of ~/.deepspeed_env and
//     ./.deepspeed_env (or of $DS_ENV_FILE), later ones winning; `--env` reaches the workers
//     as on one machine.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "lib/launch/fleet/head_orders.h"
#include "lib/launch/fleet/host_launch.h"

namespace accel {

struct FleetMember {
  std::string host;
  int machine_rank = 0;
  bool local = false;             // this machine: no ssh
  std::vector<std::string> argv;  // what the head runs for it
  HeadOrders orders;
};

struct FleetFacts {
  std::map<std::string, std::string> env;  // the head's environment
  std::string self;                        // this accel's absolute path
  std::string cwd;
  std::string home;
  std::vector<std::string> args;           // the head's `accel launch` arguments
  std::optional<std::string> config_path;  // the config file read, if any
  std::optional<std::string> config_text;
  std::string token, run_id;
  // The job's heartbeat timeout: ssh gives up on a host silent that long (0: ssh's own default).
  double heartbeat_timeout = 0;
  std::function<bool(const std::string& host)> is_this_machine;
};

// One member per selected host, in machine order. Throws UsageError for ssh arguments that do
// not split (an open quote) and for a .deepspeed_env line that is not KEY=VALUE (naming file:line).
std::vector<FleetMember> fleetMembers(const HostLaunch& h, const std::optional<long long>& ssh_port,
                                      const std::optional<std::string>& ssh_args, const FleetFacts& facts);

// ssh's options for every host: BatchMode, the port, the extra options (see above). Throws
// UsageError for extra options that do not split (an open quote).
std::vector<std::string> sshOptions(const std::optional<long long>& ssh_port,
                                    const std::optional<std::string>& ssh_args, const FleetFacts& facts);

// The environment forwarded to every host (see above).
std::map<std::string, std::string> forwardedEnvironment(const FleetFacts& facts);

}  // namespace accel
