// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/etcd/http_call.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "lib/common/error.h"
#include "lib/common/socket.h"
#include "lib/common/strings.h"

namespace accel::launch::etcd {

namespace {

using Clock = std::chrono::steady_clock;
using Kind = HttpFailure::Kind;

// The connection: a socket, with TLS over it where the server speaks https.
class Wire {
 public:
  Wire(const HttpServer& server, Clock::time_point deadline) : deadline_(deadline) {
    std::string error;
    fd_ = net::connectTcp(server.host, server.port, deadline, error);
    if (fd_ < 0) throw HttpFailure(Kind::Unreachable, error);
    if (!server.tls) return;
    try {
      tls_ = std::make_unique<TlsSession>(fd_, server.host, server.files, deadline);
    } catch (const Error& e) {
      if (std::string(e.what()).find("timed out") != std::string::npos) throw HttpFailure(Kind::Unreachable, e.what());
      throw;
    }
  }
  ~Wire() {
    tls_.reset();
    ::close(fd_);
  }

  void send(const std::string& data) {
    if (tls_) return tls_->write(data, deadline_);
    for (size_t done = 0; done < data.size();) {
      const ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n > 0) {
        done += static_cast<size_t>(n);
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        throw HttpFailure(Kind::Unreachable, std::string("sending failed: ") + ::strerror(errno));
      } else {
        wait(POLLOUT);
      }
    }
  }

  // More bytes into `into`; false once the server closed.
  bool receive(std::string& into) {
    char buffer[16384];
    for (;;) {
      const size_t n = tls_ ? tls_->read(buffer, sizeof buffer, deadline_) : plainRead(buffer, sizeof buffer);
      if (n == static_cast<size_t>(-1)) continue;
      into.append(buffer, n);
      if (into.size() > kMaxBody) throw HttpFailure(Kind::NotHttp, "an answer of more than 8 MiB");
      return n > 0;
    }
  }

 private:
  size_t plainRead(char* buffer, size_t size) {
    const ssize_t n = ::recv(fd_, buffer, size, 0);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno != EAGAIN && errno != EINTR)
      throw HttpFailure(Kind::Unreachable, std::string("reading failed: ") + ::strerror(errno));
    wait(POLLIN);
    return static_cast<size_t>(-1);
  }
  void wait(short events) {
    pollfd p{fd_, events, 0};
    if (::poll(&p, 1, net::remainingMs(deadline_)) == 0) throw HttpFailure(Kind::Unreachable, "no answer in time");
  }

  Clock::time_point deadline_;
  int fd_ = -1;
  std::unique_ptr<TlsSession> tls_;
};

// The status line and headers: the status and the header block (lowercase names).
struct Head {
  int status = 0;
  std::optional<size_t> length;
  bool chunked = false;
};

Head parseHead(const std::string& head) {
  const auto lines = split(head, '\n');
  const std::string status_line = lines.empty() ? "" : trim(lines[0]);
  if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12)
    throw HttpFailure(Kind::NotHttp, fmt::format("'{}' is not an HTTP status line", status_line.substr(0, 60)));
  Head h;
  h.status = std::atoi(status_line.substr(9, 3).c_str());
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string line = trim(lines[i]);
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string name = toLower(trim(line.substr(0, colon))), value = trim(line.substr(colon + 1));
    if (name == "content-length") h.length = static_cast<size_t>(std::strtoull(value.c_str(), nullptr, 10));
    if (name == "transfer-encoding" && toLower(value).find("chunked") != std::string::npos) h.chunked = true;
  }
  return h;
}

// Decodes chunks from `raw` (the bytes after the head) into `body`: true once the last chunk
// (or, with `first_only`, the first) is complete.
bool dechunk(const std::string& raw, std::string& body, bool first_only) {
  body.clear();
  for (size_t at = 0;;) {
    const size_t eol = raw.find("\r\n", at);
    if (eol == std::string::npos) return false;
    const size_t size = std::strtoul(raw.substr(at, eol - at).c_str(), nullptr, 16);
    if (size == 0) return true;
    if (raw.size() < eol + 2 + size + 2) return false;
    body.append(raw, eol + 2, size);
    if (first_only) return true;
    at = eol + 2 + size + 2;
  }
}

}  // namespace

std::string HttpServer::text() const { return fmt::format("{}://{}:{}", tls ? "https" : "http", host, port); }

HttpReply httpCall(const HttpServer& server, const std::string& method, const std::string& path,
                   const std::string& body, const std::vector<std::string>& headers, Clock::time_point deadline,
                   bool first_chunk_only) {
  Wire wire(server, deadline);
  std::string request =
      fmt::format("{} {} HTTP/1.1\r\nHost: {}:{}\r\nConnection: close\r\n", method, path, server.host, server.port);
  for (const auto& h : headers) request += h + "\r\n";
  if (method != "GET") request += fmt::format("Content-Type: application/json\r\nContent-Length: {}\r\n", body.size());
  wire.send(request + "\r\n" + body);
  std::string raw;
  size_t head_end = std::string::npos;
  while ((head_end = raw.find("\r\n\r\n")) == std::string::npos) {
    if (raw.size() >= 5 && raw.rfind("HTTP/", 0) != 0) parseHead(raw);  // throws: not HTTP
    if (!wire.receive(raw)) parseHead(raw.empty() ? "(nothing)" : raw);
    if (head_end == std::string::npos && raw.size() > 65536) throw HttpFailure(Kind::NotHttp, "a header of 64 KiB");
  }
  const Head head = parseHead(raw.substr(0, head_end));
  std::string rest = raw.substr(head_end + 4);
  HttpReply reply{head.status, {}};
  for (;;) {
    if (head.chunked && dechunk(rest, reply.body, first_chunk_only)) return reply;
    if (!head.chunked && head.length && rest.size() >= *head.length) {
      reply.body = rest.substr(0, *head.length);
      return reply;
    }
    if (!wire.receive(rest)) break;
  }
  if (head.chunked || head.length) throw HttpFailure(Kind::Unreachable, "the connection closed inside the answer");
  reply.body = rest;
  return reply;
}

}  // namespace accel::launch::etcd
