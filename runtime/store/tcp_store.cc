// SPDX-License-Identifier: Apache-2.0
#include "runtime/store/tcp_store.h"

#include <fmt/format.h>

#include "lib/common/strings.h"
#include "runtime/store/tcp_store_client.h"
#include "runtime/store/tcp_store_server.h"

namespace accel {

namespace proto = store_protocol;
using proto::Command;
using std::chrono::milliseconds;

namespace {

// Loopback names stay loopback-only. Anything else binds every interface, as c10d does: a
// hostname can resolve to a host-local address on the host itself (127.0.1.1 on Debian) that
// other nodes could never reach.
std::string bindHostFor(const std::string& host) {
  bool loopback = host == "localhost" || startsWith(host, "127.") || host == "::1";
  return loopback ? host : "";
}

void checkKey(const std::string& key) {
  if (key.size() > proto::kMaxKeyBytes) {
    throw Error(fmt::format("store: a key of {} bytes is over the {}-byte limit", key.size(), proto::kMaxKeyBytes));
  }
}

void checkKeys(const std::vector<std::string>& keys) {
  if (keys.size() > proto::kMaxKeysPerRequest) {
    throw Error(
        fmt::format("store: {} keys in one request, over the limit of {}", keys.size(), proto::kMaxKeysPerRequest));
  }
  for (const auto& k : keys) checkKey(k);
}

void checkValue(const std::string& key, const Bytes& value) {
  if (value.size() > proto::kMaxValueBytes) {
    throw Error(fmt::format("store: the value of key {} ({} bytes) is over the {} MiB limit", key, value.size(),
                            proto::kMaxValueBytes >> 20),
                "keep bulk data out of the store: send it through the process group");
  }
}

}  // namespace

class TCPStore::Client : public TCPStoreClient {
  using TCPStoreClient::TCPStoreClient;
};

TCPStore::TCPStore(std::string host, int port, TCPStoreOptions options)
    : host_(std::move(host)), port_(port), options_(std::move(options)) {
  setTimeout(options_.timeout);
  // One deadline for connecting and the rendezvous together: the timeout bounds the constructor.
  const auto deadline = TCPStoreClient::deadlineAfter(options_.timeout);
  if (options_.is_server) {
    server_ = std::make_unique<TCPStoreServer>(bindHostFor(host_), port_, options_.token);
    port_ = server_->port();
  }
  client_ = std::make_unique<Client>(host_, port_, options_);
  if (options_.world_size > 0 && options_.wait_for_workers) {
    client_->waitForRanks(options_.world_size, deadline, options_.timeout);
  }
}

std::unique_ptr<Store> TCPStore::quickHandle(milliseconds limit) {
  {
    std::lock_guard<std::mutex> lock(silence_mutex_);
    if (silent_at_ && std::chrono::steady_clock::now() - *silent_at_ < kSilenceRemembered) {
      throw StoreTimeout(fmt::format("store at {}:{} did not answer a moment ago", host_, port_));
    }
  }
  TCPStoreOptions o;
  o.rank = -1;
  o.token = options_.token;
  o.timeout = limit;
  o.reply_grace = limit;
  o.retry_connect = false;
  try {
    return std::make_unique<TCPStore>(host_, port_, o);
  } catch (const StoreTimeout&) {
    std::lock_guard<std::mutex> lock(silence_mutex_);
    silent_at_ = std::chrono::steady_clock::now();
    throw;
  }
}

TCPStore::~TCPStore() {
  client_.reset();
  if (!server_ || server_->waitUntilClientsLeft(timeout())) return;
  std::vector<std::string> ranks;
  for (int rank : server_->connectedRanks()) ranks.push_back(std::to_string(rank));
  fmt::print(stderr, "accel-runtime: store on port {} stopped with {} client(s) connected{}\n", port_,
             server_->connectedClients(), ranks.empty() ? "" : " (ranks " + join(ranks, ", ") + ")");
}

void TCPStore::set(const std::string& key, const Bytes& value) {
  checkKey(key);
  checkValue(key, value);
  auto w = TCPStoreClient::newRequest(Command::kSet);
  w.field(key);
  w.field(value);
  client_->call(w, milliseconds(0), [](proto::Reader& r, bool) { r.expectEnd(); });
}

Bytes TCPStore::get(const std::string& key) {
  checkKey(key);
  const milliseconds limit = timeout();
  auto w = TCPStoreClient::newRequest(Command::kGet);
  w.field(key);
  w.i64(limit.count());
  return client_->call(w, limit, [&](proto::Reader& r, bool timed_out) {
    if (timed_out) throw client_->keyTimeout({key}, limit);
    Bytes value = r.bytes(proto::kMaxValueBytes);
    r.expectEnd();
    return value;
  });
}

int64_t TCPStore::add(const std::string& key, int64_t delta) {
  checkKey(key);
  auto w = TCPStoreClient::newRequest(Command::kAdd);
  w.field(key);
  w.i64(delta);
  return client_->call(w, milliseconds(0), [](proto::Reader& r, bool) {
    int64_t value = r.i64();
    r.expectEnd();
    return value;
  });
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  checkKeys(keys);
  auto w = TCPStoreClient::newRequest(Command::kCheck);
  w.keys(keys);
  return client_->call(w, milliseconds(0), [](proto::Reader& r, bool) {
    bool all = r.u8() != 0;
    r.expectEnd();
    return all;
  });
}

void TCPStore::wait(const std::vector<std::string>& keys, milliseconds timeout) {
  checkKeys(keys);
  auto w = TCPStoreClient::newRequest(Command::kWait);
  w.keys(keys);
  w.i64(timeout.count());
  client_->call(w, timeout, [&](proto::Reader& r, bool timed_out) {
    if (!timed_out) return r.expectEnd();
    auto missing = r.keys();
    r.expectEnd();
    throw client_->keyTimeout(missing, timeout);
  });
}

bool TCPStore::deleteKey(const std::string& key) {
  checkKey(key);
  auto w = TCPStoreClient::newRequest(Command::kDelete);
  w.field(key);
  return client_->call(w, milliseconds(0), [](proto::Reader& r, bool) {
    bool existed = r.u8() != 0;
    r.expectEnd();
    return existed;
  });
}

int64_t TCPStore::numKeys() {
  auto w = TCPStoreClient::newRequest(Command::kNumKeys);
  return client_->call(w, milliseconds(0), [](proto::Reader& r, bool) {
    int64_t n = r.i64();
    r.expectEnd();
    return n;
  });
}

Bytes TCPStore::compareSet(const std::string& key, const Bytes& expected, const Bytes& desired) {
  checkKey(key);
  checkValue(key, expected);
  checkValue(key, desired);
  auto w = TCPStoreClient::newRequest(Command::kCompareSet);
  w.field(key);
  w.field(expected);
  w.field(desired);
  return client_->call(w, milliseconds(0), [](proto::Reader& r, bool) {
    Bytes value = r.bytes(proto::kMaxValueBytes);
    r.expectEnd();
    return value;
  });
}

}  // namespace accel
