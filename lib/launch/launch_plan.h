// SPDX-License-Identifier: Apache-2.0
// Resolved settings -> the workers this machine starts: each one's argv and environment
// (launch_env.h), plus how to supervise them. Pure; checked before anything starts.
#pragma once

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lib/common/defaults.h"
#include "lib/launch/launch_settings.h"

namespace accel {

struct WorkerSpec {
  int rank = 0;
  int local_rank = 0;
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;  // set over the launcher's environment
  std::vector<std::string> unset;                        // the launcher's variables it must not inherit
  std::vector<int> cpus;  // enable_cpu_affinity: pinned to these CPUs; empty: the launcher's affinity
  std::string label;      // the output prefix's name when not "rank N" (an mpirun that runs them all)
};

// Each machine's workers and role, in machine order: ranks are contiguous, machine by machine
// (torchrun's assignment), and ROLE_RANK counts among the machines of the same role.
struct MachineShare {
  int procs = 0;
  std::string role;
  bool operator==(const MachineShare&) const = default;
};

struct LaunchPlan {
  LaunchSettings settings;
  std::vector<WorkerSpec> workers;  // this machine's, by local rank
  int world_size = 1;
  int num_machines = 1;
  int machine_rank = 0;  // -1: given out by machine 0 at the join (a c10d endpoint's join order)
  // Every machine's share. On several machines each machine knows only its own until the join
  // (world_at_join): then machine 0 learns the others' and settles it (setLayout).
  std::vector<MachineShare> layout;
  bool world_at_join = false;
  std::string master_addr;
  int master_port = defaults::kMainProcessPort;
  bool port_is_ours = true;  // machine rank 0: check (and on one machine, replace) the port
  std::string label_host;    // "" on one machine; the host name in "[host:rank N]" otherwise
  int max_restarts = 0;
  double grace_period = defaults::kGracePeriodSeconds;
  // Several machines (job_link.h): the launchers' job channel on machine 0.
  std::string host;                                    // this machine's host name
  int main_process_port = defaults::kMainProcessPort;  // as configured (messages; master_port may move)
  int job_port = 0;
  double heartbeat_timeout = defaults::kHeartbeatTimeoutSeconds;
  double join_timeout = defaults::kJoinTimeoutSeconds;
  // Every rank's stack (lib/launch/stacks/): --hang_timeout (0: off), and how long the tools may
  // take before a stop (0: no stacks before a stop).
  double hang_timeout = 0;
  double stacks_timeout = defaults::kStacksTimeoutSeconds;
  std::string token;                           // the job's store token: a launcher of another job is refused
  std::string run_id;                          // TORCHELASTIC_RUN_ID; names the launch's folder in log_dir
  std::string log_dir;                         // "" for none
  std::string log_run_dir;                     // this launch's folder in log_dir, once the supervisor made it
  std::string line_prefix_template;            // torchrun's, for console lines; "" for "[rank N] "
  int console_streams = 3;                     // bit 1 stdout, bit 2 stderr (torchrun --tee encoding)
  std::map<int, int> console_streams_by_rank;  // local rank -> streams, overriding the above
  std::set<int> console_ranks;                 // local ranks shown on the console; empty = all
  // The terminal (terminal_settings.h): pseudo-terminals, the input's rank on this machine (-1:
  // none here), the progress interval off a terminal.
  enum class Pty { Auto, On, Off } pty = Pty::Auto;
  int stdin_rank = -1;
  double progress_interval = 10;
};

// `argv` is the resolved program command line (see program.h). Throws UsageError/ConfigError.
LaunchPlan makeLaunchPlan(LaunchSettings settings, const std::vector<std::string>& argv, const LaunchFacts& facts);

// The machine whose launcher starts `rank` (ranks are numbered machine by machine), or -1.
int machineOfRank(const LaunchPlan& plan, int rank);

// The job's layout as machine 0 settled it at the join, with this machine's rank in it: the
// workers' ranks and torchrun's variables follow (RANK, WORLD_SIZE, GROUP_RANK, ROLE_RANK,
// ROLE_WORLD_SIZE), and so does the input's rank.
void setLayout(LaunchPlan& plan, int machine_rank, const std::vector<MachineShare>& layout);

// Points every worker at another MASTER_PORT (after the launcher found the configured one busy).
void setMasterPort(LaunchPlan& plan, int port);

// Several machines: the interface through which this machine reaches main_process_ip
// (`iface`, holding `local_address`) becomes the workers' GLOO_SOCKET_IFNAME and
// NCCL_SOCKET_IFNAME, except where the launcher's environment sets them; a note says which.
void setSocketInterface(LaunchPlan& plan, const std::string& iface, const std::string& local_address,
                        const std::map<std::string, std::string>& launcher_env);

}  // namespace accel
