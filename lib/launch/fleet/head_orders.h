// SPDX-License-Identifier: Apache-2.0
// What a head launcher (`accel launch --hostfile`, fleet.h) tells each machine's launcher that it
// starts, and how that launcher takes it. The orders are one JSON line on the launcher's stdin;
// the stdin then stays open as the launcher's link to the head.
//
// Everything private travels on that line, never on a command line (`ps` shows command lines to
// every user of a host) nor in ssh's environment: the job's store token, the forwarded
// environment (which may hold a .deepspeed_env's keys), the config file's text, and the launch
// arguments as typed on the head.
//
// The receiving side is `accel launch --from_head` (apps/cmd_launch.cc): it reads the line
// (bounded in size and time), refuses another protocol naming both versions, then launches its
// machine's share as one machine of the job: the arguments parsed as on the head, with the
// machine's place (rank, count, main address, its process count and GPUs) put over them. The
// end of its stdin is the head's order to stop (watchHeadLink): the head stopped the job, or the
// ssh connection is gone.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/launch/launch_options.h"

namespace accel {

struct HeadOrders {
  int protocol = 0;     // the job channel's (job_messages.h kProtocolVersion)
  std::string version;  // the head's accel version, for messages
  std::string host;     // this machine's name in the hostfile: the label of its output
  int machine_rank = 0;
  int num_machines = 1;
  std::string main_addr;  // machine 0's address, as every host can reach it
  int main_port = 0;
  int procs = 1;        // this machine's processes
  std::string gpu_ids;  // the slots it runs, as gpu_ids; "" for its own GPUs from 0
  std::string token;    // the job's store token
  std::string run_id;
  std::string cwd;                         // the head's working directory, where the workers start
  std::map<std::string, std::string> env;  // set in this launcher's environment first
  std::vector<std::string> args;           // the head's `accel launch` arguments
  std::optional<std::string> config_path;  // the config file the head read, and its text
  std::optional<std::string> config_text;
};

// The line a launcher started by a head writes on stdout once its orders, its settings and its
// plan were all good, just before it joins the job: the head takes it (never shown), and from then
// on the launcher's exit code is the job's, not a failure to start.
inline constexpr const char* kLauncherReady = "accel-from-head: ready";

// After the orders, the head's link carries only these lines: a signal for this launcher to take
// as its own (which it passes on to its workers).
inline constexpr const char* kForwardUsr1 = "SIGUSR1\n";
inline constexpr const char* kForwardUsr2 = "SIGUSR2\n";

std::string encodeHeadOrders(const HeadOrders& orders);

// Throws UsageError naming the field, or both versions for another protocol.
HeadOrders decodeHeadOrders(const std::string& line);

// One line from `fd`, within `timeout_seconds`. Throws UsageError when the head sent nothing,
// too much, or closed the link first.
HeadOrders readHeadOrders(int fd, double timeout_seconds);

// The head's arguments with the machine's place put over them: its rank and count, the main
// address and port, its process count (torchrun's --nproc_per_node: machines may differ) and
// GPUs, the job's token and run id. The result launches one machine and never another head.
LaunchOptions ordersToOptions(const HeadOrders& orders);

// From now on the end of `fd` (the head's link) stops this launcher as SIGTERM does, and a
// kForwardUsr1/kForwardUsr2 line raises that signal in it. A thread that only reads; the
// process's exit ends it.
void watchHeadLink(int fd);

}  // namespace accel
