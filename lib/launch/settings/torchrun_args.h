// SPDX-License-Identifier: Apache-2.0
// torchrun's side of a launch, before the settings are resolved (launch_settings.h):
//   - PET_<FLAG> variables give every torchrun flag the command line did not give its value, as
//     torchrun's argparse actions read them (torch/distributed/argparse_util.py): the text as if
//     typed after the flag; a switch is on when its integer is not 0;
//   - the torchrun flags that say what an Accelerate config key says (--nnodes, --node_rank,
//     --master_addr, --master_port, --rdzv_endpoint, --standalone) become values of that key,
//     each with where it came from and whether it was typed or read from the environment.
// Pure: the environment comes in. Throws UsageError naming the flag or variable.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/launch/etcd/etcd_place.h"
#include "lib/launch/settings/launch_options.h"
#include "lib/launch/settings/origin.h"
#include "lib/launch/settings/rdzv_conf.h"

namespace accel::launch::settings {

// The variable that gives torchrun's flag `flag` ("nnodes") its default: PET_NNODES.
std::string torchrunVariable(std::string_view flag);

// Applies PET_<NAME> for each torchrun flag the command line left out (recorded in o.origins,
// or o.env_values for a config-key flag such as --rdzv_backend).
void applyTorchrunEnv(LaunchOptions& o, const std::map<std::string, std::string>& env);

// A config key's value from torchrun's flags, variables or a pod's convention.
struct Sourced {
  nlohmann::json value;
  Origin origin;       // "--nnodes", "PET_NNODES", "PyTorchJob v1 RANK"
  bool typed = false;  // on the command line (else the environment)
};

struct TorchrunPlacement {
  std::map<std::string, Sourced> keys;    // num_machines, machine_rank, main_process_ip, main_process_port
  std::optional<Sourced> nproc_per_node;  // the text: N, gpu, cpu or auto
  // An endpoint names machine 0 (a c10d-style rendezvous) and no node rank was given: the
  // machine HOST names is machine 0, the others are numbered as they join.
  std::optional<std::string> endpoint_host;
  std::optional<RdzvConf> rdzv_conf;  // --rdzv_conf, read once (rdzv_conf.h)
  Origin rdzv_conf_origin;
  std::optional<bool> is_host;  // --rdzv_conf is_host: whether this machine is machine 0
  // --rdzv_backend etcd or etcd-v2: the server (user and password come from the environment).
  std::optional<etcd::EtcdPlace> etcd;
  std::optional<Sourced> min_machines;  // --nnodes MIN:MAX's MIN (MAX is num_machines)
  std::vector<std::string> notes;       // what torchrun's flags said that the launch does differently
};

TorchrunPlacement torchrunPlacement(const LaunchOptions& o);

struct LaunchSettings;
// The rest of torchrun's flags as settings: rdzv_id, redirects, local_addr, virtual_local_rank,
// torchrun (the grammar), shutdown_timeout as grace_period; notes for the ones accel ignores.
void resolveTorchrunOptions(LaunchSettings& s, const LaunchOptions& o);

// torchrun's --signals_to_handle: comma-separated names, each one the launcher handles (SIGINT,
// SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2; spaces around a name allowed, as torchrun strips
// them). Returns `list` as given, which the workers get as TORCHELASTIC_SIGNALS_TO_HANDLE, as
// torchrun's do. The launcher's behaviour does not depend on it: the stop signals always stop
// the job, SIGUSR1 and SIGUSR2 are always passed on. Throws UsageError naming a name outside
// that set (torchrun only logs a warning for it).
std::string checkSignalsToHandle(const std::string& list);

// torchrun's c10d endpoint port when HOST has none.
inline constexpr int kRdzvDefaultPort = 29400;

}  // namespace accel::launch::settings
