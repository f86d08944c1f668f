// SPDX-License-Identifier: Apache-2.0
#include "lib/common/flight_ring.h"

#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <functional>

namespace accel::flight {

namespace {

// Words (8 bytes each): a header of 8, kMaxGroups groups of 8, then the entries of 8.
using Word = std::atomic<uint64_t>;
constexpr uint64_t kMagic = 0x3152464c45434341ULL;  // "ACCELFR1"
// kTicks0, kNs0: ticks() and nowNs() read together when the writer started; kTicks0 is 0 when its
// times are nanoseconds already.
enum Header : size_t { kMagicWord, kShape, kRankWorld, kPid, kWritten, kGroups, kTicks0, kNs0, kHeaderWords };
constexpr size_t kGroupWords = 8, kEntryWords = 8;
constexpr size_t kFirstEntry = kHeaderWords + kMaxGroups * kGroupWords;
enum Field : size_t { kStamp, kSeq, kCount, kKind, kEnqueued, kStarted, kEnded, kState };
static_assert(sizeof(Word) == 8 && kEntryWords == 8);

Word* words(void* memory) { return static_cast<Word*>(memory); }
const Word* words(const void* memory) { return static_cast<const Word*>(memory); }
Word* entry(void* memory, uint32_t capacity, uint64_t index) {
  return words(memory) + kFirstEntry + (index % capacity) * kEntryWords;
}

uint64_t pack(int high, int low) {
  return static_cast<uint64_t>(static_cast<uint32_t>(high)) << 32 | static_cast<uint32_t>(low);
}
int high(uint64_t w) { return static_cast<int>(static_cast<uint32_t>(w >> 32)); }
int low(uint64_t w) { return static_cast<int>(static_cast<uint32_t>(w)); }

// An entry's update under its stamp: skipped when the entry is no longer record `index`. A
// sequence lock without fences (ThreadSanitizer cannot follow those): the data's stores are
// releases, so none is seen before the odd stamp; a reader's loads of it are acquires, so its
// second look at the stamp comes after them. On x86-64 both are plain moves. The odd stamp is
// taken by a compare-and-swap, here and in claim(): an update and a begin() of the record
// `capacity` later, on another thread, never write the entry at once.
template <typename Body> void update(Word* e, uint64_t index, Body body) {
  const uint64_t whole = 2 * index + 2;
  uint64_t expected = whole;
  if (!e[kStamp].compare_exchange_strong(expected, whole - 1, std::memory_order_acquire)) return;
  body(e);
  e[kStamp].store(whole, std::memory_order_release);
}

// begin()'s hold on an entry: its stamp made `odd` once no update or other begin holds it (an
// odd stamp: a few stores away from even). False when a newer record has the entry already
// (a begin delayed past one `capacity` later): this older one is not written.
bool claim(Word* e, uint64_t odd) {
  uint64_t seen = e[kStamp].load(std::memory_order_relaxed);
  for (unsigned spins = 0;; ++spins) {
    if (seen > odd) return false;
    if (seen % 2 == 0 && e[kStamp].compare_exchange_weak(seen, odd, std::memory_order_acquire)) return true;
    if (seen % 2 == 1) {
      if (spins > 64) ::sched_yield();
      seen = e[kStamp].load(std::memory_order_relaxed);
    }
  }
}

std::string label(const Word* g) {
  char text[(kGroupWords - 1) * 8 + 1] = {};
  for (size_t i = 1; i < kGroupWords; ++i) {
    const uint64_t w = g[i].load(std::memory_order_relaxed);
    std::memcpy(text + (i - 1) * 8, &w, 8);
  }
  text[kMaxLabel] = '\0';
  return text;
}

constexpr int kLooks = 3;  // at an entry being written, before it counts as torn

// Record `index` as it is now, or nullopt when it is being written or was overwritten.
std::optional<Call> readEntry(const Word* e, uint64_t index) {
  const uint64_t whole = 2 * index + 2;
  if (e[kStamp].load(std::memory_order_acquire) != whole) return std::nullopt;
  Call c;
  c.seq = e[kSeq].load(std::memory_order_acquire);
  c.count = e[kCount].load(std::memory_order_acquire);
  const uint64_t kind = e[kKind].load(std::memory_order_acquire);
  c.group = kind & 0xff;
  c.kind = (kind >> 8) & 0xff;
  c.dtype = (kind >> 16) & 0xff;
  c.op = (kind >> 24) & 0xff;
  c.root = high(kind);
  c.enqueued_ns = static_cast<int64_t>(e[kEnqueued].load(std::memory_order_acquire));
  c.started_ns = static_cast<int64_t>(e[kStarted].load(std::memory_order_acquire));
  c.ended_ns = static_cast<int64_t>(e[kEnded].load(std::memory_order_acquire));
  c.state = static_cast<State>(e[kState].load(std::memory_order_acquire));
  if (e[kStamp].load(std::memory_order_relaxed) != whole) return std::nullopt;
  return c;
}

// The ring's times as nanoseconds: its counter through the pair noted at its start and a pair read
// now (the counter runs at one rate on every core); 0 stays 0.
std::function<int64_t(int64_t)> nanoseconds(const Word* w);

}  // namespace

const char* stateName(State s) {
  switch (s) {
    case State::Scheduled: return "scheduled";
    case State::Started: return "started";
    case State::Completed: return "completed";
    case State::Failed: return "failed";
  }
  return "?";
}

size_t ringBytes(uint32_t capacity) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t bytes = (kFirstEntry + static_cast<size_t>(capacity) * kEntryWords) * sizeof(Word);
  return (bytes + page - 1) / page * page;
}

namespace {
int64_t clockNs(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

int64_t nowNs() { return clockNs(CLOCK_MONOTONIC); }

namespace {
bool tscClock() {
#if defined(__x86_64__)
  std::ifstream source("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  return static_cast<bool>(source >> name) && name == "tsc";
#else
  return false;
#endif
}
const bool kTsc = tscClock();
}  // namespace

int64_t ticks() {
#if defined(__x86_64__)
  if (kTsc) return static_cast<int64_t>(__rdtsc());
#endif
  return nowNs();
}

int64_t realtimeOffsetNs() {
  const int64_t before = clockNs(CLOCK_MONOTONIC), real = clockNs(CLOCK_REALTIME), after = clockNs(CLOCK_MONOTONIC);
  return real - (before + (after - before) / 2);
}

Writer::Writer(void* memory, uint32_t capacity, int rank, int world, Clock clock)
    : memory_(memory), capacity_(capacity) {
  Word* w = words(memory);
  w[kMagicWord].store(0, std::memory_order_seq_cst);  // readers leave it alone until it is whole
  for (uint64_t i = 0; i < capacity; ++i) entry(memory, capacity, i)[kStamp].store(0, std::memory_order_relaxed);
  w[kShape].store(pack(static_cast<int>(kVersion), static_cast<int>(capacity)), std::memory_order_relaxed);
  w[kRankWorld].store(pack(rank, world), std::memory_order_relaxed);
  w[kPid].store(static_cast<uint64_t>(::getpid()), std::memory_order_relaxed);
  w[kWritten].store(0, std::memory_order_relaxed);
  w[kGroups].store(0, std::memory_order_relaxed);
  const bool counter = clock == Clock::Ticks && kTsc;
  w[kNs0].store(static_cast<uint64_t>(nowNs()), std::memory_order_relaxed);
  w[kTicks0].store(counter ? static_cast<uint64_t>(ticks()) : 0, std::memory_order_relaxed);
  w[kMagicWord].store(kMagic, std::memory_order_release);
}

unsigned Writer::addGroup(const std::string& text, int size, int rank) {
  Word* w = words(memory_);
  const uint64_t n = w[kGroups].load(std::memory_order_relaxed);
  if (n >= kMaxGroups) return kMaxGroups - 1;
  Word* g = w + kHeaderWords + n * kGroupWords;
  char bytes[(kGroupWords - 1) * 8] = {};
  std::memcpy(bytes, text.data(), std::min(text.size(), kMaxLabel));
  g[0].store(pack(size, rank), std::memory_order_relaxed);
  for (size_t i = 1; i < kGroupWords; ++i) {
    uint64_t part = 0;
    std::memcpy(&part, bytes + (i - 1) * 8, 8);
    g[i].store(part, std::memory_order_relaxed);
  }
  w[kGroups].store(n + 1, std::memory_order_release);
  return static_cast<unsigned>(n);
}

uint64_t Writer::begin(const Call& call, bool running, int64_t now) {
  const uint64_t index = words(memory_)[kWritten].fetch_add(1, std::memory_order_relaxed);
  Word* e = entry(memory_, capacity_, index);
  if (!claim(e, 2 * index + 1)) return index;
  e[kSeq].store(call.seq, std::memory_order_release);
  e[kCount].store(call.count, std::memory_order_release);
  e[kKind].store(pack(call.root, static_cast<int>(call.group | call.kind << 8 | call.dtype << 16 | call.op << 24)),
                 std::memory_order_release);
  e[kEnqueued].store(static_cast<uint64_t>(now), std::memory_order_release);
  e[kStarted].store(running ? static_cast<uint64_t>(now) : 0, std::memory_order_release);
  e[kEnded].store(0, std::memory_order_release);
  e[kState].store(static_cast<uint64_t>(running ? State::Started : State::Scheduled), std::memory_order_release);
  e[kStamp].store(2 * index + 2, std::memory_order_release);
  return index;
}

void Writer::start(uint64_t index, int64_t now) {
  update(entry(memory_, capacity_, index), index, [now](Word* e) {
    e[kStarted].store(static_cast<uint64_t>(now), std::memory_order_release);
    e[kState].store(static_cast<uint64_t>(State::Started), std::memory_order_release);
  });
}

void Writer::end(uint64_t index, bool ok, int64_t now) {
  update(entry(memory_, capacity_, index), index, [ok, now](Word* e) {
    e[kEnded].store(static_cast<uint64_t>(now), std::memory_order_release);
    e[kState].store(static_cast<uint64_t>(ok ? State::Completed : State::Failed), std::memory_order_release);
  });
}

namespace {
std::function<int64_t(int64_t)> nanoseconds(const Word* w) {
  const auto ticks0 = static_cast<int64_t>(w[kTicks0].load(std::memory_order_relaxed));
  const auto ns0 = static_cast<int64_t>(w[kNs0].load(std::memory_order_relaxed));
  if (ticks0 == 0) return [](int64_t t) { return t; };
  const int64_t ticks_now = ticks(), ns_now = nowNs();
  const double per_tick =
      ticks_now > ticks0 ? static_cast<double>(ns_now - ns0) / static_cast<double>(ticks_now - ticks0) : 0;
  return [=](int64_t t) { return t ? ns0 + static_cast<int64_t>(static_cast<double>(t - ticks0) * per_tick) : 0; };
}
}  // namespace

std::optional<Dump> readFlight(const void* memory, size_t bytes) {
  if (!memory || bytes < kFirstEntry * sizeof(Word)) return std::nullopt;
  const Word* w = words(memory);
  if (w[kMagicWord].load(std::memory_order_acquire) != kMagic) return std::nullopt;
  const uint64_t shape = w[kShape].load(std::memory_order_relaxed);
  Dump d;
  d.capacity = static_cast<uint32_t>(low(shape));
  if (static_cast<uint32_t>(high(shape)) != kVersion || d.capacity == 0 || ringBytes(d.capacity) > bytes) {
    return std::nullopt;
  }
  const uint64_t rank_world = w[kRankWorld].load(std::memory_order_relaxed);
  d.rank = high(rank_world);
  d.world = low(rank_world);
  d.pid = static_cast<long long>(w[kPid].load(std::memory_order_relaxed));
  const uint64_t groups = std::min<uint64_t>(w[kGroups].load(std::memory_order_acquire), kMaxGroups);
  for (uint64_t i = 0; i < groups; ++i) {
    const Word* g = w + kHeaderWords + i * kGroupWords;
    const uint64_t size_rank = g[0].load(std::memory_order_relaxed);
    d.groups.push_back({label(g), high(size_rank), low(size_rank)});
  }
  d.written = w[kWritten].load(std::memory_order_acquire);
  const auto ns = nanoseconds(w);
  void* base = const_cast<void*>(memory);
  for (uint64_t k = d.written > d.capacity ? d.written - d.capacity : 0; k < d.written; ++k) {
    // An entry being updated is odd for a few stores: looked at again before it counts as torn.
    std::optional<Call> c;
    for (int look = 0; look < kLooks && !c; ++look) c = readEntry(entry(base, d.capacity, k), k);
    if (c) {
      c->enqueued_ns = ns(c->enqueued_ns);
      c->started_ns = ns(c->started_ns);
      c->ended_ns = ns(c->ended_ns);
      d.calls.push_back(*c);
    } else {
      ++d.torn;
    }
  }
  return d;
}

}  // namespace accel::flight
