// SPDX-License-Identifier: Apache-2.0
#include "runtime/comm/flight_recorder.h"

#include <sys/mman.h>

#include <cstdlib>
#include <mutex>

#include "lib/common/strings.h"
#include "lib/launch/launch_env.h"
#include "runtime/comm/launcher_memory.h"

namespace accel {

namespace {

int envInt(const char* name, int fallback) {
  const char* text = std::getenv(name);
  const auto v = text ? parseInt(text) : std::nullopt;
  return v && *v >= 0 && *v <= (1 << 30) ? static_cast<int>(*v) : fallback;
}

struct Recorder {
  flight::Writer* writer = nullptr;  // nullptr: off
  const void* memory = nullptr;
  size_t bytes = 0;
};

// The ring: the launcher's where it handed one over, else this process's own.
Recorder makeRecorder() {
  int entries = launch_env::kFlightEntries.fallback();
  try {
    entries = launch_env::kFlightEntries.value();
  } catch (const std::exception&) {
    // The launcher checks the variable; a worker run alone keeps the default rather than failing.
  }
  if (entries <= 0) return {};
  const auto capacity = static_cast<uint32_t>(entries);
  const size_t bytes = flight::ringBytes(capacity);
  void* memory = nullptr;
  if (const long long local = launcherSlot(); local >= 0) {
    memory = mapLauncherMemory(launch_env::kFlightFd, "accel-flight", static_cast<size_t>(local) * bytes, bytes);
  }
  if (!memory) {
    memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return {};
  }
  auto* w = new flight::Writer(memory, capacity, envInt(launch_env::kRank, 0), envInt(launch_env::kWorldSize, 1));
  return {w, memory, bytes};
}

const Recorder& recorder() {
  static const Recorder r = makeRecorder();  // lives as long as the process
  return r;
}

flight::Writer* writer() { return recorder().writer; }

}  // namespace

namespace {
thread_local bool tl_unrecorded = false;
}  // namespace

FlightUnrecorded::FlightUnrecorded() : previous_(tl_unrecorded) { tl_unrecorded = true; }
FlightUnrecorded::~FlightUnrecorded() { tl_unrecorded = previous_; }

int flightGroup(const std::string& label, int size, int rank) {
  static std::mutex adding;
  flight::Writer* w = writer();
  if (!w || tl_unrecorded) return kNoFlightGroup;
  std::lock_guard<std::mutex> hold(adding);
  return static_cast<int>(w->addGroup(label, size, rank));
}

void flightSkipGroup() { flightGroup("(not a member)", 0, -1); }

uint64_t flightBegin(int group, const CollectiveCall& call, bool running, int64_t now) {
  if (group == kNoFlightGroup || call.shown != 0) return kNoFlightEntry;
  flight::Call c;
  c.seq = call.seq;
  c.count = call.count;
  c.group = static_cast<unsigned>(group);
  c.kind = static_cast<unsigned>(call.kind);
  c.dtype = static_cast<unsigned>(call.dtype);
  c.op = static_cast<unsigned>(call.op);
  c.root = call.root;
  return writer()->begin(c, running, now);
}

void flightStart(uint64_t entry, int64_t now) {
  if (entry != kNoFlightEntry) writer()->start(entry, now);
}

void flightEnd(uint64_t entry, bool ok, int64_t now) {
  if (entry != kNoFlightEntry) writer()->end(entry, ok, now);
}

std::optional<flight::Dump> flightDump() {
  const Recorder& r = recorder();
  return r.writer ? flight::readFlight(r.memory, r.bytes) : std::nullopt;
}

}  // namespace accel
