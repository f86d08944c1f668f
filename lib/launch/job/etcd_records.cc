// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/job/etcd_records.h"

#include <poll.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/common/process/signal_channel.h"
#include "lib/common/random_bytes.h"
#include "lib/common/socket.h"

namespace accel::launch::job {

namespace {

using nlohmann::json;

std::optional<json> objectOf(const std::optional<etcd::KeyValue>& kv) {
  if (!kv) return std::nullopt;
  json j = json::parse(kv->value, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  return j;
}

}  // namespace

int EtcdRecords::reach(std::chrono::steady_clock::time_point deadline, int signal_fd) {
  std::string last;
  for (;;) {
    try {
      etcd_.version();
      etcd_.authenticate();
      return 0;
    } catch (const UsageError&) {
      throw;
    } catch (const Error& e) {
      if (std::string(e.what()).find(" refused ") != std::string::npos) throw;  // etcd answered: no use retrying
      last = e.what();
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      throw Error(
          fmt::format("the etcd rendezvous at {} did not answer within the join timeout: {}", etcd_.endpoint(), last),
          "start etcd there, check --rdzv_endpoint (HOST:PORT of etcd's client URL) and that a firewall lets "
          "that TCP port through");
    }
    pollfd p{signal_fd, POLLIN, 0};
    ::poll(&p, 1, std::min(500, net::remainingMs(deadline)));
    if (int signal = process::readInterrupt(signal_fd, p.revents)) return signal;
  }
}

void EtcdRecords::enter(long long lease, const std::string& host) {
  etcd_.put(fmt::format("{}members/{:x}", root_, lease), json{{"host", host}}.dump(), lease);
}

int EtcdRecords::registered() { return static_cast<int>(etcd_.list(root_ + "members/").size()); }

std::optional<HubRecord> EtcdRecords::hub() {
  auto kv = etcd_.get(root_ + "hub");
  auto j = objectOf(kv);
  if (!j || !(*j)["port"].is_number_integer() || !(*j)["address"].is_string()) return std::nullopt;
  return HubRecord{j->value("job", ""), j->value("host", ""), (*j)["address"].get<std::string>(),
                   (*j)["port"].get<int>(), kv->create_revision};
}

bool EtcdRecords::claimHub(const HubRecord& mine, long long lease, long long& revision) {
  const json value = {{"job", mine.job}, {"host", mine.host}, {"address", mine.address}, {"port", mine.port}};
  std::optional<etcd::KeyValue> existing;
  if (!etcd_.create(root_ + "hub", value.dump(), lease, existing)) return false;
  const auto now = etcd_.get(root_ + "hub");
  revision = now ? now->create_revision : 0;
  return true;
}

std::optional<JobState> EtcdRecords::state() {
  auto j = objectOf(etcd_.get(root_ + "state"));
  if (!j || !(*j)["job"].is_string()) return std::nullopt;
  return JobState{(*j)["job"].get<std::string>(), j->value("round", 0), j->value("restarts", 0)};
}

void EtcdRecords::state(const std::string& job, int round, int restarts) {
  etcd_.put(root_ + "state", json{{"job", job}, {"round", round}, {"restarts", restarts}}.dump(), recordLease());
}

std::optional<JobEvent> EtcdRecords::verdict(const std::string& job) {
  auto j = objectOf(etcd_.get(root_ + "verdict"));
  if (!j || j->value("job", "") != job) return std::nullopt;
  JobEvent e = JobEvent::end(j->value("code", 1), j->value("message", ""), j->value("hint", ""));
  e.signal = j->value("signal", 0);
  return e;
}

void EtcdRecords::end(const std::string& job, const JobEvent& e) {
  const json value = {
      {"job", job}, {"code", e.exit_code}, {"signal", e.signal}, {"message", e.message}, {"hint", e.hint}};
  etcd_.put(root_ + "verdict", value.dump(), recordLease());
}

long long EtcdRecords::recordLease() {
  if (!record_lease_) record_lease_ = etcd_.grantLease(kRecordSeconds);
  return record_lease_;
}

std::string EtcdRecords::newJobId() { return randomHex(8); }

std::string EtcdRecords::noMachineZero(double seconds, const std::string& last_error) const {
  return fmt::format("no machine 0 of run {} answered through the etcd rendezvous at {} within {:g} s (join_timeout){}",
                     root_, etcd_.endpoint(), seconds, last_error.empty() ? "" : ": " + last_error);
}

}  // namespace accel::launch::job
