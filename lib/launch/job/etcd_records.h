// SPDX-License-Identifier: Apache-2.0
// What an etcd rendezvous (etcd_link.h) keeps in etcd, under PREFIX/RUN_ID/: the JSON of each
// record, read and written in one place.
//   hub            machine 0: its job id, host, address and job port (under its lease)
//   members/LEASE  a launcher of the run (under its lease): how many are alive
//   state          the job id, its latest round and restarts (under a record lease of 2 hours)
//   verdict        the job id and how it ended (under the record lease)
// A value that does not read as its record counts as absent (another program's key). Calls
// throw Error naming the endpoint (etcd_client.h).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "lib/launch/etcd/etcd_client.h"
#include "lib/launch/job/job_link.h"

namespace accel::launch::job {

struct HubRecord {
  std::string job, host, address;
  int port = 0;
  long long revision = 0;  // the key's create revision: which machine 0 this is
};

struct JobState {
  std::string job;
  int round = 0;
  int restarts = 0;
};

// The record lease's time, as torchrun's etcd rendezvous keeps a run's keys.
inline constexpr long long kRecordSeconds = 7200;

class EtcdRecords {
 public:
  EtcdRecords(etcd::EtcdClient& client, const etcd::EtcdPlace& place, const std::string& run_id)
      : etcd_(client), root_(place.prefix + "/" + run_id + "/") {}

  // Until etcd answers, retrying while it cannot be reached: 0, or the signal that interrupted.
  // Throws Error naming the endpoint at the deadline, UsageError at once where something that
  // is not etcd answers there. Signs in with the user, where there is one.
  int reach(std::chrono::steady_clock::time_point deadline, int signal_fd);
  void enter(long long lease, const std::string& host);
  int registered();  // launchers of the run with a live lease

  std::optional<HubRecord> hub();
  // Creates the hub key as `mine` under `lease`: false where another launcher holds it.
  bool claimHub(const HubRecord& mine, long long lease, long long& revision);

  std::optional<JobState> state();
  void state(const std::string& job, int round, int restarts);
  std::optional<JobEvent> verdict(const std::string& job);
  void end(const std::string& job, const JobEvent& e);

  static std::string newJobId();
  // The error where no machine 0 came within the join timeout.
  std::string noMachineZero(double seconds, const std::string& last_error) const;

 private:
  long long recordLease();

  etcd::EtcdClient& etcd_;
  std::string root_;
  long long record_lease_ = 0;
};

}  // namespace accel::launch::job
