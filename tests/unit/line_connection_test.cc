// SPDX-License-Identifier: Apache-2.0
// The job channel's connection (lib/launch/job/line_connection.h) over a real socket pair: what a
// peer said before it went is delivered even when this side's next write fails first.
#include <catch2/catch.hpp>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "lib/launch/job/line_connection.h"

using accel::launch::job::LineConnection;

namespace {

struct Pair {
  int mine = -1, theirs = -1;
  Pair() {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    mine = fds[0];
    theirs = fds[1];
  }
  ~Pair() {
    if (theirs >= 0) ::close(theirs);
  }
  void say(const std::string& text) { REQUIRE(::write(theirs, text.data(), text.size()) == ssize_t(text.size())); }
  void leave() {
    ::close(theirs);
    theirs = -1;
  }
};

short readiness(const LineConnection& c) {
  pollfd p = c.pollFd();
  REQUIRE(::poll(&p, 1, 5000) == 1);
  return p.revents;
}

}  // namespace

TEST_CASE("line connection: complete lines are delivered, a partial one waits for its end", "[unit][job]") {
  Pair pair;
  LineConnection c(pair.mine);
  pair.say("one\ntw");
  CHECK(c.service(readiness(c)) == std::vector<std::string>{"one"});
  pair.say("o\n");
  CHECK(c.service(readiness(c)) == std::vector<std::string>{"two"});
  CHECK_FALSE(c.closed());
}

TEST_CASE("line connection: a peer's last lines are read after this side's write to it failed", "[unit][job]") {
  Pair pair;
  LineConnection c(pair.mine);
  pair.say("verdict 1\nverdict 2\n");
  pair.leave();
  c.send("heartbeat");  // fails: the peer is gone
  CHECK(c.open());
  CHECK_FALSE(c.wantsToWrite());
  const auto lines = c.service(readiness(c));
  CHECK(lines == std::vector<std::string>{"verdict 1", "verdict 2"});
  CHECK(c.closed());
  CHECK(c.error() == "connection closed (broken pipe)");
}

TEST_CASE("line connection: a peer that closed is reported closed, its last lines first", "[unit][job]") {
  Pair pair;
  LineConnection c(pair.mine);
  pair.say("last\n");
  pair.leave();
  CHECK(c.service(readiness(c)) == std::vector<std::string>{"last"});
  CHECK_FALSE(c.closed());
  CHECK(c.service(readiness(c)).empty());
  CHECK(c.closed());
  CHECK(c.error() == "connection closed");
}
