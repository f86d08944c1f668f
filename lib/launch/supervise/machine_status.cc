// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/supervise/machine_status.h"

#include "lib/common/build_info.h"
#include "lib/common/call_names.h"
#include "lib/common/process/process_state.h"
#include "lib/hardware/gpu_processes.h"

namespace accel::launch::supervise {

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kLinesShown = 10;  // a rank's last lines, each stream
constexpr size_t kLineShown = 300;  // bytes of one

void readOutput(watch::RankStatus& r, const WorkerProcess& w, Clock::time_point now) {
  std::optional<Clock::time_point> last;
  for (const auto* stream : {w.out.get(), w.err.get()}) {
    if (!stream) continue;
    const auto& tally = stream->tally();
    (stream == w.out.get() ? r.stdout_bytes : r.stderr_bytes) = tally.bytes;
    r.frames += tally.frames;
    if (!tally.frame.empty()) r.progress = tally.frame;
    const auto& kept = stream->lastLines();
    const size_t from = kept.size() > kLinesShown ? kept.size() - kLinesShown : 0;
    for (size_t i = from; i < kept.size(); ++i) r.lines.push_back(kept[i].substr(0, kLineShown));
    if (tally.last && (!last || *tally.last > *last)) last = tally.last;
  }
  if (last) r.output_age = std::chrono::duration<double>(now - *last).count();
}

// The rank's ring: collectives ever begun, less the one still open.
void readFlight(watch::RankStatus& r, const WorkerProcess& w, const FlightBoard& flights) {
  const auto dump = flights.read(w);
  if (!dump) return;
  uint64_t open = 0;
  for (const auto& call : dump->calls) {
    if (call.state != accel::flight::State::Scheduled && call.state != accel::flight::State::Started) continue;
    if (open++ == 0) {  // the oldest open one: the one the rank waits in
      r.collective =
          call.name.empty() ? calls::describeCall(call.kind, call.dtype, call.count, call.op, call.root) : call.name;
      r.collective_seconds = static_cast<double>(accel::flight::nowNs() - call.enqueued_ns) / 1e9;
    }
  }
  r.collectives = dump->written - std::min<uint64_t>(open, dump->written);
}

// NVML asked at most every kGpuLook: starting it (dlopen, nvmlInit) costs far more than a look
// at anything else here, and statuses are read each second and at every scrape.
constexpr auto kGpuLook = std::chrono::seconds(3);

// Each rank's GPU as NVML lists its process there (GPU machines only; nothing where NVML fails).
void readGpus(std::vector<watch::RankStatus>& ranks, const plan::LaunchPlan& plan) {
  if (!plan.gpus || ranks.empty()) return;
  static std::optional<std::vector<GpuProcess>> processes;  // the supervisor's thread only
  static std::optional<Clock::time_point> looked;
  if (!looked || Clock::now() - *looked >= kGpuLook) {
    std::string error;
    processes = gpuProcesses(plan.gpu_bus_ids, error);
    looked = Clock::now();
  }
  if (!processes) return;
  for (auto& r : ranks) {
    for (const auto& p : *processes) {
      if (p.pid != r.pid) continue;
      r.gpu = p.gpu;
      r.gpu_percent = p.gpu_percent;
      r.gpu_bytes += p.used_bytes;
    }
  }
}

}  // namespace

watch::MachineStatus machineStatus(const plan::LaunchPlan& plan, const std::vector<WorkerProcess>& workers,
                                   const FlightBoard& flights, const JobMoment& m) {
  watch::MachineStatus s;
  s.job = plan.run_id;
  s.host = plan.host;
  s.role = plan.role;
  s.version = buildInfo().version;
  s.machine = plan.machine_rank;
  s.decides = plan.machine_rank == 0;
  s.round = m.round;
  s.restarts = m.restarts;
  s.max_restarts = plan.max_restarts;
  s.world_size = plan.world_size;
  s.machines = plan.num_machines;
  s.started = m.started;
  const auto now = Clock::now();
  s.round_seconds = std::chrono::duration<double>(now - m.round_start).count();
  s.events = m.events;
  s.ended = m.ended;
  s.exit_code = m.exit_code;
  s.verdict = m.verdict;
  for (const auto& w : workers) {
    if (!w.spec || w.pid <= 0) continue;
    watch::RankStatus r;
    r.rank = w.spec->rank;
    r.local_rank = w.spec->local_rank;
    r.pid = w.pid;
    r.running = w.running;
    if (!w.running) r.exit_code = w.exitCode();
    r.stopped_by_launcher = w.stopped_by_us;
    readOutput(r, w, now);
    readFlight(r, w, flights);
    if (w.running) {
      const auto state = process::processState(w.pid);
      r.cpu_seconds = state.cpu_seconds;
      r.resident_bytes = state.rss;
    }
    s.ranks.push_back(std::move(r));
  }
  readGpus(s.ranks, plan);
  return s;
}

}  // namespace accel::launch::supervise
