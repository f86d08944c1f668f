// SPDX-License-Identifier: Apache-2.0
// A flight recorder's ring: the last `capacity` collectives of one rank, behind a header that
// names the rank and its process groups, laid out in memory that the launcher shares with its
// worker (launch_env.h kFlightFd) or that is the worker's own. One process writes (Writer, from
// any of its threads); any process that maps the memory reads it (readFlight) at any time, also
// while the writer is stopped, stuck or dead, and without its help. Every word is an atomic; each
// entry has a stamp that is odd while it is written (a sequence lock), so a reader takes whole
// entries only (looking again a few times at one being written) and counts the others as torn.
// The magic and kVersion are checked: a launcher and a worker of another layout ignore each
// other's rings.
// Writer::begin numbers a record with one atomic add and takes its entry by compare-and-swap;
// start and end update it in place, taking it the same way, and skip it once the ring has come
// round to it again (capacity newer records begun meanwhile): a begin and an update on two
// threads never write one entry at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace accel::flight {

inline constexpr uint32_t kVersion = 1;
inline constexpr unsigned kMaxGroups = 32;
inline constexpr size_t kMaxLabel = 55;  // bytes of a group's label kept

// torch's flight recorder's words for an entry's state, and one of ours for a failed call.
enum class State : uint8_t { Scheduled = 1, Started = 2, Completed = 3, Failed = 4 };
const char* stateName(State s);

// One record as read: times are CLOCK_MONOTONIC nanoseconds (the same for every process of a
// machine, never stepped); 0: not yet. A reader turns them into the real-time clock's with
// realtimeOffsetNs().
struct Call {
  uint64_t seq = 0;    // the group's sequence number (runtime/comm/op_queue.h)
  uint64_t count = 0;  // elements (call_names.h: the codes of kind, dtype and op)
  unsigned group = 0, kind = 0, dtype = 0, op = 0;
  int root = -1;
  State state = State::Scheduled;
  int64_t enqueued_ns = 0, started_ns = 0, ended_ns = 0;
  std::string name;  // another recorder's name for an operation none of ours names (call_names.h kForeignKind)
};

struct Group {
  std::string label;  // "gloo rank 1 of 4"
  int size = 0;
  int rank = 0;  // this process's rank in it
};

struct Dump {
  int rank = -1;
  int world = 0;
  long long pid = 0;
  uint32_t capacity = 0;
  uint64_t written = 0;  // records ever begun: the ones before written - capacity were overwritten
  unsigned torn = 0;     // entries being written while read, left out
  std::vector<Group> groups;
  std::vector<Call> calls;  // oldest first
};

// The bytes of a ring of `capacity` entries: a whole number of pages, so that rings can lie side
// by side in one shared file and be mapped one by one.
size_t ringBytes(uint32_t capacity);

int64_t nowNs();             // CLOCK_MONOTONIC, nanoseconds
int64_t realtimeOffsetNs();  // CLOCK_REALTIME minus CLOCK_MONOTONIC, now

// The writer's clock, read at each call: the CPU's time-stamp counter where the kernel keeps time
// by it (x86-64 with clocksource tsc: invariant, the same on every core, a few nanoseconds to
// read where clock_gettime takes about twenty), else nowNs(). A ring notes which, with the
// counter and the clock read together when it started, and readFlight turns the counter into
// nanoseconds with a pair it reads then.
int64_t ticks();

class Writer {
 public:
  // What the times given to begin, start and end are: ticks() (a worker), or nanoseconds.
  enum class Clock { Ticks, Nanoseconds };
  // `memory`: ringBytes(capacity) bytes, zero or an earlier process's ring; started afresh.
  Writer(void* memory, uint32_t capacity, int rank, int world, Clock clock = Clock::Ticks);

  // A process group, numbered in the order added: ranks that make their groups in the same order
  // number them alike (torch's pg_id). Past kMaxGroups the last number is shared.
  unsigned addGroup(const std::string& label, int size, int rank);

  // A call is queued, or already running when `running`; returns its entry's index.
  // `now`: on the writer's clock (Clock).
  uint64_t begin(const Call& call, bool running, int64_t now);
  void start(uint64_t index, int64_t now);
  void end(uint64_t index, bool ok, int64_t now);

 private:
  void* memory_;
  uint32_t capacity_;
};

// What `memory` (`bytes` long) holds; nullopt where it holds no ring of this layout (a rank that
// never started one).
std::optional<Dump> readFlight(const void* memory, size_t bytes);

}  // namespace accel::flight
