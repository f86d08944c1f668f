// SPDX-License-Identifier: Apache-2.0
// A launch's plan: the whole job (its machines, each machine's processes and role, the world,
// where machine 0 is reached, the job's identity and times) and this machine's share (its
// workers, their output). Plain data, built only by plan::build (build.h) from the settings and
// the facts, and never changed after: a new round builds a new plan. Each worker's environment
// is derived from the plan when it starts (worker_env.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lib/common/defaults.h"
#include "lib/launch/settings/head_place.h"
#include "lib/launch/settings/launch_settings.h"

namespace accel::launch::plan {

using Env = std::vector<std::pair<std::string, std::string>>;

// One worker this machine starts.
struct WorkerSpec {
  int rank = 0;
  int local_rank = 0;
  int role_rank = 0;
  std::vector<std::string> argv;
  std::vector<int> cpus;  // pinned to these CPUs (numa_binding.h, cpu_affinity.h); empty: the launcher's affinity
  int memory_node = -1;   // --numa-binding: the NUMA node its memory prefers; -1: the kernel's default
  std::string label;      // the output prefix's name when not "rank N" (an mpirun that runs them all)
  std::string cuda_visible_device;  // --virtual_local_rank: the one GPU it sees ("" for the job's setting)
  std::vector<std::pair<std::string, std::string>> own_env;  // its own variables (an mpirun's), over the job's
};

// Each machine's workers and role, in machine order: ranks are contiguous, machine by machine
// (torchrun's assignment), and ROLE_RANK counts among the machines of the same role.
struct MachineShare {
  int procs = 0;
  std::string role;
  bool operator==(const MachineShare&) const = default;
};

// One machine of a hostfile launch, and the place the head sends it (fleet/head_orders.h).
struct HostPlan {
  settings::HeadPlace place;
  bool local = false;  // this machine: run without ssh
};

// Who the others wait for (flight/straggler_watch.h): a rank that came last to `share` of the
// last `window` collectives, by `lateness` seconds at least.
struct StragglerRule {
  int window = 50;  // 0: no watch
  double share = 0.8;
  double lateness = 0.02;
};

// How the job is watched while it runs (lib/launch/watch/).
struct Watching {
  std::string event_file;       // --event_log FILE: events appended there ("" for none)
  int event_fd = -1;            // --event_log fd:N
  bool console_events = false;  // torchrun's --event-log-handler console: its lines on stderr
  int metrics_port = 0;         // Prometheus' /metrics (0: not served)
  std::string metrics_addr;     // served on this address only
  double metrics_linger = 0;    // seconds it is served after the job ended
};

struct LaunchPlan {
  // What this launcher runs: its machine's workers (one mpirun among them for an MPI launch),
  // every host's launcher (a hostfile head, over ssh), or one launcher per node through srun.
  enum class Kind { Workers, Fleet, Srun } kind = Kind::Workers;

  // ---- the whole job ----
  int num_machines = 1;  // this round's; before the first round, MAX of --nnodes MIN:MAX
  int min_machines = 1;  // MIN of --nnodes MIN:MAX (num_machines when static)
  int max_machines = 1;  // MAX: a round never has more; the machines beyond it are spares
  int machine_rank = 0;  // -1: given out by machine 0 at the join (a c10d endpoint's join order)
  // Machine 0 gives out the machine ranks in every round (launch_settings.h's Placement::dynamic): a
  // lost machine, one that joins or a spare changes the next round's layout instead of ending.
  bool dynamic = false;
  // The etcd rendezvous (job/etcd_link.h): machine 0 is whichever launcher etcd elects, in each
  // round; master_addr is the elected one's (the round's).
  std::optional<etcd::EtcdPlace> etcd;
  std::string local_addr;  // torchrun's --local_addr: the address this machine is reached at, "" to find it
  int restarts = 0;        // TORCHELASTIC_RESTART_COUNT: the failures restarted so far, not the rounds
  // Every machine's share. On several machines each machine knows only its own until the join
  // (world_at_join); then machine 0 settles it, and the next plan is built from the settled one.
  std::vector<MachineShare> layout;
  int world_size = 1;
  bool world_at_join = false;
  std::string master_addr;  // where every machine reaches machine 0 (machine_zero.h)
  int master_port = defaults::kMainProcessPort;
  int main_process_port = defaults::kMainProcessPort;  // as configured (messages; master_port may move)
  int job_port = 0;                                    // the launchers' job channel on machine 0
  std::string run_id;                                  // TORCHELASTIC_RUN_ID; names the launch's folder in log_dir
  std::string token;                                   // the job's store token: a launcher of another job is refused
  Watching watching;
  std::string role = "default";
  int max_restarts = 0;
  // The restart policy (job/restart_policy.h).
  bool restart_hangs = true;
  double startup_timeout = 30;
  int max_startup_failures = 3;
  int max_machine_failures = 3;
  int max_no_progress_restarts = 3;
  double gpu_free_timeout = 30;          // before a later round: how long the last one's processes may keep GPU memory
  bool gpus = false;                     // this machine's workers use its GPUs
  std::vector<std::string> gpu_bus_ids;  // theirs, by PCI bus id ("" where only libcuda answered)
  double grace_period = defaults::kGracePeriodSeconds;
  double heartbeat_timeout = defaults::kHeartbeatTimeoutSeconds;
  double join_timeout = defaults::kJoinTimeoutSeconds;
  double last_call_timeout = 30;  // dynamic: after MIN joined, how long the first round waits for more
  double hang_timeout = 0;        // 0: off
  double stacks_timeout = defaults::kStacksTimeoutSeconds;
  int flight_entries = 0;     // each rank's flight recorder ring (supervise/flight_board.h); 0: none
  StragglerRule stragglers;   // flight/straggler_watch.h; window 0 (or no flight recorder): no watch
  int64_t clock_skew_ns = 0;  // tests only (lib/common/variables.h kTestClockSkew)
  bool torch_flight = false;  // Python workers: torch's flight recorder and accel's hook (torch_flight.h)
  std::string python_path;    // torch_flight: the PYTHONPATH the workers would get without the hook
  // torch_flight on GPUs: torch's NCCL recorder (its handlers, dumps on a timeout); the dump file's
  // and the pipe's prefixes are accel's where the user set neither (worker_env.h torchDumpPrefix).
  bool torch_nccl = false;
  bool torch_dump_file = false, torch_dump_pipe = false;

  // ---- this machine ----
  std::string host;                           // this machine's host name
  std::string label_host;                     // "" on one machine; the host name in "[host:rank N]" otherwise
  bool one_console = false;                   // a hostfile head shows every machine's launcher on its console
  std::vector<WorkerSpec> workers;            // by local rank
  bool torchrun_env = true;                   // the workers get torchrun's ranks (RANK, WORLD_SIZE, …)
  bool deepspeed_env = false;                 // … or DeepSpeed's launcher's (launch_env.h), instead
  std::string device_ids;                     // deepspeed_env: this machine's CUDA_VISIBLE_DEVICES
  bool virtual_local_rank = false;            // torchrun's --virtual_local_rank: every LOCAL_RANK is 0
  Env exports;                                // every worker's variables that come from the settings
  std::vector<std::string> unset;             // the launcher's variables the workers must not inherit
  std::string socket_interface;               // the workers' GLOO/NCCL_SOCKET_IFNAME ("" for none)
  std::vector<std::string> socket_variables;  // which of the two the launcher's environment leaves to it
  std::vector<std::string> user_env;          // --env KEY=VALUE the workers get, accel's own left out

  // ---- the workers' output ----
  std::string log_dir;                         // "" for none
  std::vector<std::string> copy_filters[2];    // torchrun's duplicate filters: stdout's, stderr's (none: no copy)
  std::string rank_log_prefix;                 // --enable_each_rank_log: DIR/<stamp>_rank, + R.log per rank
  std::string line_prefix_template;            // torchrun's, for console lines; "" for "[rank N] "
  int console_streams = 3;                     // bit 1 stdout, bit 2 stderr (torchrun --tee encoding)
  std::map<int, int> console_streams_by_rank;  // local rank -> streams, overriding the above
  std::set<int> console_ranks;                 // local ranks shown on the console; empty = all
  settings::Pty pty = settings::Pty::Auto;
  int stdin_rank = -1;  // the rank that takes the user's input on this machine (-1: none here)
  double progress_interval = 10;

  // ---- other kinds ----
  std::vector<HostPlan> hosts;         // Kind::Fleet: every selected host, machine 0 first
  std::vector<std::string> srun_argv;  // Kind::Srun: what this launcher execs

  std::vector<std::string> notes;  // what the plan decided that the user should know
};

// The machine whose launcher starts `rank` (ranks are numbered machine by machine), or -1.
int machineOfRank(const LaunchPlan& plan, int rank);

// Whether a fleet's every host is this machine: no launcher of it goes through ssh.
inline bool allLocal(const std::vector<HostPlan>& hosts) {
  return std::all_of(hosts.begin(), hosts.end(), [](const HostPlan& h) { return h.local; });
}

}  // namespace accel::launch::plan
