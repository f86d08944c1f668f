// SPDX-License-Identifier: Apache-2.0
// /metrics (lib/launch/watch/): the text exposition format as Prometheus reads it (each family
// once with HELP and TYPE, its samples together, label values escaped), the job's series from the
// deciding launcher only, and the server's answers and bounds over real sockets.
#include <catch2/catch.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "lib/common/socket.h"
#include "lib/launch/watch/metrics_server.h"
#include "lib/launch/watch/metrics_text.h"

using namespace accel::launch::watch;

namespace {

MachineStatus someMachine(int ranks, bool decides) {
  MachineStatus s;
  s.job = "job \"x\"\\";
  s.host = "h\n1";
  s.role = "default";
  s.version = "0.1.0";
  s.decides = decides;
  s.restarts = 2;
  s.world_size = ranks;
  for (int r = 0; r < ranks; ++r) {
    RankStatus rank;
    rank.rank = r;
    rank.local_rank = r;
    rank.pid = 1000 + r;
    rank.running = r != 1;
    if (r == 1) rank.exit_code = 7;
    rank.output_age = 0.5;
    s.ranks.push_back(rank);
  }
  return s;
}

// Families in order, checking the format's rules on the way: HELP then TYPE, a family's samples
// together after its TYPE, no family twice, every sample line NAME{LABELS} VALUE.
std::map<std::string, std::vector<std::string>> parseExposition(const std::string& text) {
  std::map<std::string, std::vector<std::string>> families;
  std::set<std::string> seen;
  std::string current;
  const std::regex sample(R"re(([a-z_]+)\{((?:[a-z_]+="(?:[^"\\]|\\.)*",?)*)\} (-?[0-9.e+]+|NaN|[+-]Inf))re");
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    INFO(line);
    if (line.rfind("# HELP ", 0) == 0) {
      current = line.substr(7, line.find(' ', 7) - 7);
      REQUIRE(seen.insert(current).second);
      families[current];
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      REQUIRE(line.substr(7, current.size()) == current);
      continue;
    }
    std::smatch m;
    REQUIRE(std::regex_match(line, m, sample));
    REQUIRE(m[1].str() == current);
    families[current].push_back(m[2].str());
  }
  return families;
}

int connectTo(int port) {
  std::string error;
  const int fd =
      accel::net::connectTcp("127.0.0.1", port, std::chrono::steady_clock::now() + std::chrono::seconds(5), error);
  REQUIRE(fd >= 0);
  return fd;
}

// Serves `server` on this thread until `done` says so or 10 s pass.
void serveUntil(MetricsServer& server, const std::function<bool()>& done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done() && std::chrono::steady_clock::now() < until) {
    std::vector<pollfd> fds;
    int timeout = 20;
    server.addPollFds(fds, timeout);
    ::poll(fds.data(), fds.size(), std::min(timeout, 20));
    server.service(fds, [] { return std::string("accel_up 1\n"); });
  }
}

// Sends `request` and reads the answer to its end, serving in between.
std::string ask(MetricsServer& server, const std::string& request) {
  const int fd = connectTo(server.port());
  (void)::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string answer;
  bool closed = false;
  serveUntil(server, [&] {
    char buffer[4096];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n > 0) answer.append(buffer, static_cast<size_t>(n));
    closed = closed || n == 0;
    return closed;
  });
  ::close(fd);
  return answer;
}

}  // namespace

TEST_CASE("metrics: the exposition format, each family once, labels escaped", "[metrics][unit]") {
  const auto families = parseExposition(renderMetrics(someMachine(3, true)));
  CHECK(families.at("accel_job_restarts_total").size() == 1);
  CHECK(families.at("accel_rank_up").size() == 3);
  CHECK(families.at("accel_rank_exit_code").size() == 1);  // only the rank that exited
  CHECK(families.at("accel_rank_output_bytes_total").size() == 6);
  CHECK(families.at("accel_rank_pid")[2] == R"(job="job \"x\"\\",host="h\n1",machine="0",rank="2",local_rank="2")");
  CHECK(families.count("accel_job_exit_code") == 0);  // not before the end
  MachineStatus ended = someMachine(2, true);
  ended.ended = true;
  ended.exit_code = 7;
  ended.verdict = "failed";
  const std::string text = renderMetrics(ended);
  CHECK(text.find("accel_job_exit_code{job=\"job \\\"x\\\"\\\\\"} 7\n") != std::string::npos);
  CHECK(text.find("verdict=\"failed\"} 1\n") != std::string::npos);
  // Another machine's launcher: its ranks, none of the job's own series.
  const auto member = parseExposition(renderMetrics(someMachine(2, false)));
  CHECK(member.count("accel_job_round") == 0);
  CHECK(member.at("accel_rank_up").size() == 2);
}

TEST_CASE("metrics: 1,024 ranks render in one exposition", "[metrics][unit]") {
  const auto families = parseExposition(renderMetrics(someMachine(1024, true)));
  CHECK(families.at("accel_rank_cpu_seconds_total").size() == 1024);
}

TEST_CASE("metrics server: GET /metrics answered, everything else refused", "[metrics][unit]") {
  MetricsServer server;
  REQUIRE(server.open("127.0.0.1", 0).empty());
  const std::string ok = ask(server, "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n");
  CHECK(ok.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(ok.find("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n") != std::string::npos);
  CHECK(ok.find("\r\nContent-Length: 11\r\n") != std::string::npos);
  CHECK(ok.substr(ok.size() - 11) == "accel_up 1\n");
  CHECK(ask(server, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n").rfind("HTTP/1.1 405 ", 0) == 0);
  CHECK(ask(server, "GET / HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404 ", 0) == 0);
  CHECK(ask(server, "GET /" + std::string(5000, 'a') + " HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 414 ", 0) == 0);
  CHECK(ask(server, "GET /metrics HTTP/1.1\r\nX: " + std::string(9000, 'a')).rfind("HTTP/1.1 431 ", 0) == 0);
  CHECK(ask(server, "GET /" + std::string(20000, 'a') + " HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 414 ", 0) == 0);
  CHECK(ask(server, "hello\r\n\r\n").rfind("HTTP/1.1 400 ", 0) == 0);
  CHECK(server.connections() == 0);
  MetricsServer taken;
  CHECK(taken.open("127.0.0.1", server.port()).find("warning: /metrics cannot be served on 127.0.0.1:") == 0);
}

TEST_CASE("metrics server: connections are bounded and idle ones closed", "[metrics][unit]") {
  MetricsServer server(std::chrono::milliseconds(300));
  REQUIRE(server.open("127.0.0.1", 0).empty());
  std::vector<int> idle;
  for (size_t i = 0; i < MetricsServer::kMaxConnections; ++i) idle.push_back(connectTo(server.port()));
  serveUntil(server, [&] { return server.connections() == MetricsServer::kMaxConnections; });
  CHECK(server.connections() == MetricsServer::kMaxConnections);
  // One more is told so and closed, while the others wait.
  CHECK(ask(server, "GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 503 ", 0) == 0);
  serveUntil(server, [&] { return server.connections() == 0; });  // the idle ones time out
  CHECK(server.connections() == 0);
  for (int fd : idle) ::close(fd);
  CHECK(ask(server, "GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200 ", 0) == 0);
}
