// SPDX-License-Identifier: Apache-2.0
// Fuzz target: machine 0's side of the job channel (lib/launch/job/job_hub.h, hub_door.h,
// job_messages.h): a real JobHub of a two-machine job on 127.0.0.1, an OS-chosen job port,
// machine 1 joined over a real socket; every input is sent over a socket and the hub serviced
// until it has read it all (loopback delivers at send time, so no thread and no sleep).
// Input: the first byte picks who sends the rest:
//   - bit 0 clear: a stranger's new connection. Properties: the hub emits no event (the job is
//     neither stopped nor ended), machine 1's connection stays open, and once the stranger
//     closes, its connection is gone from the door;
//   - bit 0 set: machine 1 itself, after its join (bit 1: this machine's round already ended,
//     so "ended" messages reach the verdict). Properties: whatever the hub decides is well
//     formed: a stop or an end with a reason, exit codes 0..255, a line it cannot read ends
//     machine 1's membership naming machine 1 (never an exception or a crash); a question it
//     asks about a rank of machine 0 comes to this launcher (an Ask event) and the answer goes
//     back; a gathering of stacks it starts asks this launcher for its own (a Collect event,
//     answered), and what it brings back holds its stacks. The hub is rebuilt after every such
//     input, so none leaves state for the next.
// Also, every input is decoded directly (job::decode): a message that decodes encodes back to
// a line that decodes to the same kind.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "lib/launch/job/job_hub.h"
#include "lib/launch/job/job_messages.h"
#include "tests/fuzz/fuzz_support.h"

using namespace accel;
using namespace accel::launch::job;
using namespace accel::launch::plan;
using namespace accel::launch::stacks;
namespace job = accel::launch::job;

namespace {

const std::string kToken = "fuzz-job-token";

LaunchPlan plan() {
  LaunchPlan p;
  p.num_machines = p.min_machines = p.max_machines = 2;
  p.machine_rank = 0;
  p.world_size = 2;
  p.workers.resize(1);  // one worker on each machine
  p.layout = {{1, "default"}, {1, "default"}};
  p.role = "default";
  p.host = "fuzz";
  p.master_addr = "127.0.0.1";
  p.master_port = 29500;
  p.job_port = 0;
  p.token = kToken;
  p.heartbeat_timeout = 1e6;  // machine 1 is silent between its inputs: never lost for that
  return p;
}

void drain(int fd) {
  char buffer[65536];
  while (::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT) > 0) {
  }
}

// Closed with a reset, not a FIN: hundreds of thousands of connections' TIME_WAITs would use
// up the machine's ephemeral ports.
void closeWithReset(int fd) {
  const linger reset{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  ::close(fd);
}

struct Hub {
  LaunchPlan plan_ = plan();
  std::unique_ptr<JobHub> hub;
  int member = -1;  // machine 1's end
  int never = -1;   // a signal fd that never fires (the read end of a pipe)
  int never_w = -1;

  Hub() {
    int p[2];
    FUZZ_CHECK(::pipe2(p, O_CLOEXEC) == 0, "pipe()");
    never = p[0];
    never_w = p[1];
    hub = std::make_unique<JobHub>(plan_, HubDoor::Limits{}, [](const std::string&) {});
    member = fuzz::connectLoopback(hub->port());
    const std::string join =
        job::encode(job::Join{job::kProtocolVersion, 1, "member", 2, 2, 2, 2, kToken, 1, "default"}) + "\n";
    FUZZ_CHECK(::send(member, join.data(), join.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(join.size()), "send()");
    FUZZ_CHECK(hub->rendezvous(never) == 0, "the real member's join was not accepted");
    drain(member);
  }
  ~Hub() {
    closeWithReset(member);  // before the hub's side: neither end keeps a TIME_WAIT (see there)
    hub.reset();
    for (int fd : {never, never_w}) ::close(fd);
  }

  // One round in which poll says what is ready (timeout 0).
  std::vector<JobEvent> round() {
    std::vector<pollfd> fds = {{never, POLLIN, 0}};
    hub->addPollFds(fds);
    ::poll(fds.data(), fds.size(), 0);
    return hub->service(fds);
  }
};

bool memberOpen(int fd) {
  char c;
  ssize_t n = ::recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
  return n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
}

// Sends all of `bytes` on `fd`, servicing the hub between writes; returns its events.
std::vector<JobEvent> feed(Hub& h, int fd, const uint8_t* data, size_t size) {
  std::vector<JobEvent> events;
  for (size_t at = 0; at < size;) {
    ssize_t n = ::send(fd, data + at, size - at, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno != EAGAIN) break;  // the hub closed this connection: fine
    at += n > 0 ? static_cast<size_t>(n) : 0;
    for (auto& e : h.round()) events.push_back(std::move(e));
  }
  for (int i = 0; i < 3; ++i) {
    for (auto& e : h.round()) events.push_back(std::move(e));
  }
  return events;
}

std::string describe(const std::vector<JobEvent>& events) {
  std::string out;
  for (const auto& e : events) out += std::to_string(static_cast<int>(e.kind)) + " '" + e.message + "' ";
  return out;
}

void checkWellFormed(const std::vector<JobEvent>& events) {
  for (const auto& e : events) {
    FUZZ_CHECK(e.exit_code >= 0 && e.exit_code <= 255, "an exit code out of range");
    if (e.kind == JobEvent::Kind::Stop) FUZZ_CHECK(!e.message.empty(), "a stop without a reason");
    if (e.kind == JobEvent::Kind::End && e.exit_code != 0 && !e.signal && !e.failure) {
      FUZZ_CHECK(!e.message.empty(), "a failed end without a reason");
    }
  }
}

void stranger(Hub& h, const uint8_t* data, size_t size) {
  const int fd = fuzz::connectLoopback(h.hub->port());
  auto events = feed(h, fd, data, size);
  closeWithReset(fd);
  for (int i = 0; i < 3; ++i) {
    for (auto& e : h.round()) events.push_back(std::move(e));
  }
  FUZZ_CHECK(events.empty(), "a stranger's bytes made the hub decide: " + describe(events));
  FUZZ_CHECK(memberOpen(h.member), "a stranger's bytes closed machine 1's connection");
  drain(h.member);
}

// Returns true: the hub is rebuilt after every input of machine 1.
bool fromMember(Hub& h, bool round_ended, const uint8_t* data, size_t size) {
  std::vector<JobEvent> events;
  if (round_ended) h.hub->roundEnded(0, true, -1);
  auto more = feed(h, h.member, data, size);
  // Questions are answered and this launcher's stacks handed over, then the hub goes on: a stop
  // that waited for the stacks comes after them.
  for (size_t i = 0; i < more.size(); ++i) {
    const JobEvent e = more[i];                                         // a copy: more grows below
    if (e.kind == JobEvent::Kind::Ask) h.hub->tell(e.id, "an answer");  // back to machine 1
    if (e.kind == JobEvent::Kind::Collect) {
      RankStack own;
      own.text = "#0 main";
      h.hub->stacksCollected(e.id, {own});
      for (auto& later : h.round()) more.push_back(std::move(later));
    }
    FUZZ_CHECK(e.kind != JobEvent::Kind::Stacks || e.stacks, "a Stacks event without its stacks");
  }
  events.insert(events.end(), more.begin(), more.end());
  checkWellFormed(events);
  const bool open = memberOpen(h.member);
  if (!open) {
    bool named = false;
    for (const auto& e : events) named |= e.message.find("machine 1") != std::string::npos;
    FUZZ_CHECK(named, "machine 1's connection was closed without naming it");
  }
  drain(h.member);
  return true;  // what machine 1 sent (a line left open, a question) must not carry over
}

void roundTrip(const uint8_t* data, size_t size) {
  std::string error;
  auto message = job::decode(fuzz::bytes(data, size), error);
  if (!message) {
    FUZZ_CHECK(!error.empty(), "a line refused without saying why");
    return;
  }
  auto again = job::decode(job::encode(*message), error);
  FUZZ_CHECK(again && again->index() == message->index(), "a decoded message does not encode back: " + error);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::unique_ptr<Hub> hub;
  if (!hub) hub = std::make_unique<Hub>();
  const uint8_t mode = size > 0 ? data[0] : 0;
  const uint8_t* rest = size > 0 ? data + 1 : data;
  const size_t rest_size = size > 0 ? size - 1 : 0;
  roundTrip(rest, rest_size);
  if (!(mode & 1)) {
    stranger(*hub, rest, rest_size);
  } else if (fromMember(*hub, mode & 2, rest, rest_size)) {
    hub.reset();
  }
  return 0;
}
