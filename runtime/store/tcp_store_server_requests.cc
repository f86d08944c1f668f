// SPDX-License-Identifier: Apache-2.0
// TCPStoreServer, second half: what clients say. The handshake, the commands on the key-value
// map, and the parked get/wait/rendezvous requests (sockets and poll() are in tcp_store_server.cc).
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>

#include <fmt/format.h>

#include "lib/common/strings.h"
#include "runtime/store/tcp_store_server.h"

namespace accel {

namespace proto = store_protocol;
using proto::Command;
using proto::Status;

namespace {

// A rendezvous timeout lists this many missing ranks at most (the count is always exact).
constexpr size_t kMaxMissingRanksListed = 64;

// Clamped so that a client asking for "forever" cannot overflow the clock arithmetic.
std::chrono::steady_clock::time_point deadlineAfter(int64_t ms) {
  constexpr int64_t kMaxMs = int64_t{30} * 24 * 3600 * 1000;
  return std::chrono::steady_clock::now() + std::chrono::milliseconds(std::clamp<int64_t>(ms, 0, kMaxMs));
}

std::string peerName(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  char host[NI_MAXHOST] = "?", serv[NI_MAXSERV] = "?";
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    ::getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof host, serv, sizeof serv,
                  NI_NUMERICHOST | NI_NUMERICSERV);
  }
  return proto::endpoint(host, std::atoi(serv));
}

proto::Writer reply(Status status) {
  proto::Writer w;
  w.beginFrame();
  w.u8(uint8_t(status));
  return w;
}

}  // namespace

bool TCPStoreServer::handshake(Connection& c) {
  const size_t available = c.in.size() - c.in_pos;
  if (available >= 4 && proto::Reader(c.in.data() + c.in_pos, 4).u32() != proto::kMagic) {
    refuse(c, Status::kRefusedMagic, "not an accel store client (wrong magic number)", std::nullopt);
    return false;
  }
  if (available < proto::kHandshakeFixedBytes) return false;
  proto::Reader head(c.in.data() + c.in_pos + 4, proto::kHandshakeFixedBytes - 4);
  uint32_t version = head.u32();
  int32_t rank = head.i32();
  uint32_t token_len = head.u32();
  if (version != proto::kVersion) {
    refuse(c, Status::kRefusedVersion,
           fmt::format("protocol version {} is not this server's version {} (are all ranks running "
                       "the same accel build?)",
                       version, proto::kVersion),
           rank);
    return false;
  }
  if (token_len > proto::kMaxTokenBytes) throw proto::ProtocolError("token too long");
  if (available < proto::kHandshakeFixedBytes + token_len) return false;
  const uint8_t* token = c.in.data() + c.in_pos + proto::kHandshakeFixedBytes;
  c.in_pos += proto::kHandshakeFixedBytes + token_len;
  if (std::string_view(reinterpret_cast<const char*>(token), token_len) != token_) {
    refuse(c, Status::kRefusedToken, "wrong run token (another job is using this port?)", rank);
    return false;
  }
  proto::Writer w;
  w.u8(uint8_t(Status::kOk));
  w.u32(0);
  c.out.insert(c.out.end(), w.bytes().begin(), w.bytes().end());
  c.handshaken = true;
  c.rank = std::max(rank, -1);
  {
    std::lock_guard<std::mutex> lock(census_mutex_);
    ++connected_;
    if (rank >= 0) {
      joined_ranks_.insert(rank);
      connected_ranks_.insert(rank);
    }
  }
  flush(c);
  if (rank >= 0) wakeParked();  // a rendezvous may be complete now
  return true;
}

void TCPStoreServer::refuse(Connection& c, Status status, const std::string& reason, std::optional<int> rank) {
  // Only clients that spoke our protocol are worth a log line; port scanners are not.
  if (rank) {
    log(fmt::format("store on port {} refused a client from {} (rank {}): {}", port_, peerName(c.fd), *rank, reason));
  }
  proto::Writer w;
  w.u8(uint8_t(status));
  w.field(reason.substr(0, proto::kMaxReasonBytes));
  c.out.insert(c.out.end(), w.bytes().begin(), w.bytes().end());
  c.closing = true;
  flush(c);
}

void TCPStoreServer::send(Connection& c, proto::Writer& w) {
  w.finishFrame();
  c.out.insert(c.out.end(), w.bytes().begin(), w.bytes().end());
  flush(c);
}

void TCPStoreServer::handleRequest(Connection& c, const uint8_t* payload, size_t size) {
  proto::Reader r(payload, size);
  uint8_t command = r.u8();
  if (command > proto::kLastCommand) throw proto::ProtocolError("unknown command");
  proto::Writer w = reply(Status::kOk);
  bool changed = false;
  switch (Command(command)) {
    case Command::kPing: break;
    case Command::kSet: {
      std::string key = r.string(proto::kMaxKeyBytes);
      Bytes value = r.bytes(proto::kMaxValueBytes);
      r.expectEnd();  // before any change: a malformed request changes nothing
      data_[key] = std::move(value);
      changed = true;
      break;
    }
    case Command::kGet:
    case Command::kWait: {
      Parked p{Command(command), {}, 0, {}};
      if (p.command == Command::kGet) {
        p.keys.push_back(r.string(proto::kMaxKeyBytes));
      } else {
        p.keys = r.keys();
      }
      p.deadline = deadlineAfter(r.i64());
      r.expectEnd();
      return park(c, std::move(p));
    }
    case Command::kAdd: {
      std::string key = r.string(proto::kMaxKeyBytes);
      int64_t delta = r.i64();
      r.expectEnd();
      auto it = data_.find(key);
      int64_t sum = addedCounter(it == data_.end() ? nullptr : &it->second, delta);
      data_[key] = toBytes(std::to_string(sum));
      w.i64(sum);
      changed = true;
      break;
    }
    case Command::kCheck: {
      auto keys = r.keys();
      r.expectEnd();
      w.u8(std::all_of(keys.begin(), keys.end(), [&](const auto& k) { return data_.count(k); }));
      break;
    }
    case Command::kDelete: {
      std::string key = r.string(proto::kMaxKeyBytes);
      r.expectEnd();
      w.u8(data_.erase(key) > 0);
      break;
    }
    case Command::kNumKeys: w.i64(static_cast<int64_t>(data_.size())); break;
    case Command::kCompareSet: {
      std::string key = r.string(proto::kMaxKeyBytes);
      Bytes expected = r.bytes(proto::kMaxValueBytes);
      Bytes desired = r.bytes(proto::kMaxValueBytes);
      r.expectEnd();
      auto it = data_.find(key);
      if (compareSetMatches(it == data_.end() ? nullptr : &it->second, expected)) {
        it = data_.insert_or_assign(key, std::move(desired)).first;
        changed = true;
      }
      w.field(it == data_.end() ? Bytes{} : it->second);
      break;
    }
    case Command::kWaitRanks: {
      Parked p{Command::kWaitRanks, {}, r.i32(), deadlineAfter(r.i64())};
      r.expectEnd();
      if (p.world_size <= 0 || p.world_size > proto::kMaxWorldSize) {
        throw proto::ProtocolError("bad world size");
      }
      return park(c, std::move(p));
    }
  }
  r.expectEnd();
  send(c, w);
  if (changed) wakeParked();
}

void TCPStoreServer::park(Connection& c, Parked parked) {
  c.parked = std::move(parked);
  tryFinish(c, Clock::now() >= c.parked->deadline);
}

// Answers the connection's parked request when it is satisfied, or with kTimeout when it has
// expired; the connection then goes back to parsing whatever it sent meanwhile.
bool TCPStoreServer::tryFinish(Connection& c, bool expired) {
  const Parked& p = *c.parked;
  proto::Writer w;
  if (p.command == Command::kWaitRanks) {
    if (!allRanksJoined(p.world_size) && !expired) return false;
    std::vector<int32_t> missing;
    int32_t joined = 0;
    {
      std::lock_guard<std::mutex> lock(census_mutex_);
      for (int32_t r = 0; r < p.world_size && missing.size() < kMaxMissingRanksListed; ++r) {
        if (!joined_ranks_.count(r)) missing.push_back(r);
      }
      joined = static_cast<int32_t>(std::distance(joined_ranks_.begin(), joined_ranks_.lower_bound(p.world_size)));
    }
    w = reply(missing.empty() ? Status::kOk : Status::kTimeout);
    w.i32(joined);
    w.u32(static_cast<uint32_t>(missing.size()));
    for (int32_t r : missing) w.i32(r);
  } else {
    std::vector<std::string> missing;
    for (const auto& k : p.keys) {
      if (!data_.count(k)) missing.push_back(k);
    }
    if (!missing.empty() && !expired) return false;
    w = reply(missing.empty() ? Status::kOk : Status::kTimeout);
    if (!missing.empty()) {
      w.keys(missing);
    } else if (p.command == Command::kGet) {
      w.field(data_.at(p.keys.front()));
    }
  }
  c.parked.reset();
  send(c, w);
  runnable_.push_back(&c);
  return true;
}

bool TCPStoreServer::allRanksJoined(int world_size) const {
  std::lock_guard<std::mutex> lock(census_mutex_);
  // The size test settles every call but the last few without a scan.
  if (joined_ranks_.size() < static_cast<size_t>(world_size)) return false;
  for (int r = 0; r < world_size; ++r) {
    if (!joined_ranks_.count(r)) return false;
  }
  return true;
}

void TCPStoreServer::wakeParked() {
  for (auto& c : conns_) {
    if (c->parked && !c->dead) tryFinish(*c, false);
  }
}

void TCPStoreServer::expireParked() {
  const auto now = Clock::now();
  for (auto& c : conns_) {
    if (c->parked && !c->dead && c->parked->deadline <= now) tryFinish(*c, true);
  }
}

}  // namespace accel
