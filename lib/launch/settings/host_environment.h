// SPDX-License-Identifier: Apache-2.0
// What every host of a hostfile launch gets from this one (host_launch.h), besides its place:
//   - ssh's options, the same for every host and for an MPI's own ssh: `-o BatchMode=yes` (never
//     a password prompt), `-p PORT`, then --ssh_args or $ACCEL_SSH_ARGS (DeepSpeed's
//     PDSH_SSH_ARGS_APPEND) split as a shell would (~/ as the user's home), then ConnectTimeout,
//     ServerAliveInterval=1 and ServerAliveCountMax from the heartbeat timeout: a host that does
//     not answer, or whose network went silent, ends its ssh as the job's channel ends its
//     launcher (the user's own -o options come first and so win). accel never stores nor passes
//     a credential;
//   - the forwarded environment, DeepSpeed's: the variables whose names start with NCCL,
//     PYTHON, UCX, MV2 or MLFLOW, accel's ACCEL_* (not the token, which the orders carry, nor
//     the head's own ssh settings), PYTHONPATH with the working directory first, then every
//     KEY=VALUE line of ~/.deepspeed_env and ./.deepspeed_env (or of $DS_ENV_FILE), later ones
//     winning; `--env` reaches the workers as on one machine.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace accel::launch::settings {

// `env`: the launcher's environment; `home`: the user's home ("" for none); `heartbeat_timeout`:
// the seconds ssh may stay silent (0: ssh's own default). Throws UsageError for options that do
// not split (an open quote).
std::vector<std::string> sshOptions(const std::optional<long long>& port, const std::optional<std::string>& args,
                                    const std::map<std::string, std::string>& env, const std::string& home,
                                    double heartbeat_timeout);

// Throws UsageError for a .deepspeed_env line that is not KEY=VALUE (naming file:line).
std::map<std::string, std::string> forwardedEnvironment(const std::map<std::string, std::string>& env,
                                                        const std::string& cwd, const std::string& home);

}  // namespace accel::launch::settings
