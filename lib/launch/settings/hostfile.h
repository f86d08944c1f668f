// SPDX-License-Identifier: Apache-2.0
// DeepSpeed's hostfile and resource filters (module deepspeed.launcher.runner): the hosts a job runs
// on and the slots (GPU indices) it uses on each.
//   - The hostfile has one `HOST slots=N` per line (N from 1 to kMaxHostSlots); '#' starts a
//     comment, blank lines are skipped. A host gets slots 0..N-1. DeepSpeed ignores whatever
//     follows `slots=N` on a line; accel refuses it (`slots=4x`, two entries on one line) so that
//     a typo is an error instead of a silently different job.
//   - Filters: --include or --exclude (never both) "NAME[:SLOT[,SLOT...]][@NAME[:SLOT...]...]";
//     a NAME without slots means all of its slots, a host named twice gets the union. Every
//     host and slot named must be in the pool. --num_nodes N keeps the first N hosts (more than
//     the pool has is an error); --num_gpus N keeps at most the first N slots of each host, the
//     "max number of GPUs to use on each node" of DeepSpeed's help, never a slot the hostfile
//     does not list. Both are refused beside --include/--exclude, as in DeepSpeed.
//   - Results keep the hostfile's order of hosts (rank order) and list slots ascending.
// Pure except readHostfile, which reads one file. Errors are UsageError naming where the input is
// wrong ("PATH:LINE", or the filter's flag and text) and how to fix it.
#pragma once

#include <string>
#include <vector>

namespace accel::launch::settings {

// More slots than any machine has GPUs: a value above it is a typo, not a machine.
constexpr int kMaxHostSlots = 4096;

struct HostSlots {
  std::string host;
  std::vector<int> slots;  // slot (GPU) indices this host runs, ascending; from the file: 0..N-1
  int line = 0;            // line in the hostfile (for messages); 0 when not from a file
  bool operator==(const HostSlots&) const = default;
};

// Parses a hostfile's text; `path` only names it in messages. Throws UsageError ("PATH:LINE: …")
// for a malformed line, a bad slot count, a host listed twice; ("PATH: …") for a file without hosts.
std::vector<HostSlots> parseHostfile(const std::string& text, const std::string& path);

// Reads and parses PATH. `origin` says where the path came from ("--hostfile",
// "deepspeed_hostfile (config file)"); a missing file, a directory or an unreadable file is a
// UsageError naming both.
std::vector<HostSlots> readHostfile(const std::string& path, const std::string& origin);

struct HostFilter {
  std::string include, exclude;  // DeepSpeed's syntax: "host1:0,1@host2"; "" = none
  std::string include_origin = "--include", exclude_origin = "--exclude";  // for messages
  long long num_nodes = -1, num_gpus = -1;  // -1: no limit (DeepSpeed's --num_nodes / --num_gpus)
  std::string num_nodes_origin = "--num_nodes", num_gpus_origin = "--num_gpus";  // for messages
};

// The hosts and slots of `pool` that `filter` selects, in the pool's order. Throws UsageError for
// both filters given, a limit beside a filter, a limit below 1 (other than -1), an empty or
// malformed filter, a host or slot the pool lacks (listing what it has), --num_nodes above the
// number of hosts, and a selection that leaves no host.
std::vector<HostSlots> selectHosts(const std::vector<HostSlots>& pool, const HostFilter& filter);

}  // namespace accel::launch::settings
