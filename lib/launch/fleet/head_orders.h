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
// machine's share as one machine of the job: the arguments parsed as on the head, and the
// machine's place (settings/head_place.h: rank, count, main address, its process count and GPUs,
// the job's token and run id) as the source of placement that outranks every other. The end of
// its stdin is the head's order to stop (watchHeadLink): the head stopped the job, or the ssh
// connection is gone.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/launch/settings/head_place.h"

namespace accel::launch::fleet {

struct HeadOrders {
  int protocol = 0;                        // the job channel's (job_messages.h kProtocolVersion)
  std::string version;                     // the head's accel version, for messages
  settings::HeadPlace place;               // this machine's place in the job
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

// From now on the end of `fd` (the head's link) stops this launcher as SIGTERM does, and a
// kForwardUsr1/kForwardUsr2 line raises that signal in it. A thread that only reads; the
// process's exit ends it.
void watchHeadLink(int fd);

}  // namespace accel::launch::fleet
