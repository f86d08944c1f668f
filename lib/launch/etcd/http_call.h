// SPDX-License-Identifier: Apache-2.0
// One HTTP/1.1 request on a connection of its own, plain or over TLS (tls_session.h), as etcd's
// JSON gateway is spoken to: small JSON bodies, answers sized by Content-Length or chunked. A
// streaming answer (etcd's lease keep-alive) is read up to its first chunk and the connection
// closed. Bodies are capped (kMaxBody): a server that sends more is not etcd. Blocking, until
// the deadline at most; thread-safe (no shared state).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "lib/launch/etcd/tls_session.h"

namespace accel::launch::etcd {

struct HttpReply {
  int status = 0;
  std::string body;
};

// Why a call got no reply: the server cannot be reached (or timed out), or it answered with
// something that is not HTTP.
class HttpFailure : public std::runtime_error {
 public:
  enum class Kind { Unreachable, NotHttp };
  HttpFailure(Kind why, const std::string& what) : std::runtime_error(what), kind(why) {}
  Kind kind;
};

inline constexpr size_t kMaxBody = 8 << 20;

// `method` "GET" or "POST"; `headers` as "Name: value" lines. Throws HttpFailure, or Error for
// a TLS set-up the launcher cannot make (no libssl, unreadable certificate files).
HttpReply httpCall(const HttpServer& server, const std::string& method, const std::string& path,
                   const std::string& body, const std::vector<std::string>& headers,
                   std::chrono::steady_clock::time_point deadline, bool first_chunk_only = false);

}  // namespace accel::launch::etcd
