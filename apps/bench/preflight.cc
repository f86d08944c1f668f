// SPDX-License-Identifier: Apache-2.0
// accel-bench preflight: what `accel test` runs on every rank of a job's layout. In order: the
// ranks met (rendezvous, the store), a barrier, then all_reduce, all_gather and broadcast in
// every dtype and several sizes on each transport the job's groups use (the CPU group: shared
// memory, Gloo or both; the device group: NCCL on CUDA devices), each transport's all_reduce
// bandwidth beside a memory copy of the same bytes measured in the same run, and on CUDA devices
// each machine's peer-to-peer matrix. Rank 0 prints one line per check: NAME, then `pass`, `FAIL`
// (a wrong result, naming the ranks that got it), `figure` (a measurement, never a failure) or
// `skipped`, then what was found. A peer that cannot be reached fails the collective that waited
// for it, which ends this program on that rank with the runtime's message naming the rank.
// Exit status: 1 on rank 0 when a check failed, else 0.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "apps/bench/bench.h"
#include "apps/bench/bench_verify.h"
#include "lib/common/environment.h"
#include "lib/common/strings.h"
#include "lib/common/variables.h"
#include "lib/launch/launch_env.h"
#include "runtime/comm/host_identity.h"
#include "runtime/state/accelerator.h"

namespace accel::bench {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

const DataType kDtypes[] = {DataType::F32, DataType::F64, DataType::F16, DataType::BF16,
                            DataType::I32, DataType::I64, DataType::U8};
const size_t kCounts[] = {1, 4099, (1u << 18) + 3};  // one element, an odd size, several chunks

class Report {
 public:
  explicit Report(Accelerator& acc) : acc_(acc) {}
  void line(const std::string& name, const char* status, const std::string& text) {
    failed_ += std::string(status) == "FAIL";
    checks_ += std::string(status) == "FAIL" || std::string(status) == "pass";
    if (acc_.isMainProcess()) std::printf("%-24s %-8s %s\n", name.c_str(), status, text.c_str());
    std::fflush(stdout);
  }
  void check(const std::string& name, const std::string& problem, const std::string& figure) {
    line(name, problem.empty() ? "pass" : "FAIL", problem.empty() ? figure : problem);
  }
  // Rank 0 alone fails the job, as the one that found and reported it: the launcher's summary
  // then names the report, not a rank that merely took part.
  int finish() {
    if (!acc_.isMainProcess()) return 0;
    if (!failed_) {
      std::printf("preflight: all %d checks passed\n", checks_);
      return 0;
    }
    std::printf("preflight: %d of %d checks FAILED\n", failed_, checks_);
    std::fflush(stdout);
    std::fprintf(stderr, "accel-bench preflight: %d of %d checks failed (the FAIL lines above say where)\n", failed_,
                 checks_);
    return 1;
  }

 private:
  Accelerator& acc_;
  int checks_ = 0, failed_ = 0;
};

// The slowest rank's value of `seconds` (CPU group).
double slowest(Accelerator& acc, double seconds) {
  std::vector<double> v{seconds};
  acc.reduce(v, ReduceOp::Max);
  return v[0];
}

void checkRendezvous(Accelerator& acc, Report& report) {
  const auto mine = static_cast<int64_t>(std::hash<std::string>{}(hostIdentity()));
  std::vector<int64_t> hosts = acc.gather(std::vector<int64_t>{mine});
  const size_t machines = std::set<int64_t>(hosts.begin(), hosts.end()).size();
  const auto& env = acc.env();
  report.check("rendezvous", "",
               fmt::format("{} rank{} on {} machine{}, store at {}:{}", env.world_size, env.world_size == 1 ? "" : "s",
                           machines, machines == 1 ? "" : "s", env.master_addr, env.master_port));
}

// Every rank writes its key, then reads every rank's.
void checkStore(Accelerator& acc, Report& report) {
  const int n = acc.numProcesses(), me = acc.processIndex();
  auto key = [](int r) { return "accel/preflight/store/" + std::to_string(r); };
  const auto t0 = Clock::now();
  const std::string mine = std::to_string(me * 7919);
  acc.store().set(key(me), Bytes(mine.begin(), mine.end()));
  std::vector<int64_t> wrong{0};
  for (int r = 0; r < n; ++r) {
    Bytes got = acc.store().get(key(r));
    wrong[0] += std::string(got.begin(), got.end()) != std::to_string(r * 7919);
  }
  const double seconds = slowest(acc, since(t0));
  std::vector<int64_t> all = acc.gather(wrong);
  std::string problem;
  for (int r = 0; r < n; ++r) {
    if (all[static_cast<size_t>(r)]) problem += fmt::format("rank {} read {} wrong values; ", r, all[r]);
  }
  report.check("store", problem, fmt::format("set and get of {} keys by every rank in {:.2f} ms", n, seconds * 1e3));
}

void checkBarrier(Accelerator& acc, Report& report) {
  Backend& b = acc.processGroup().backend();
  for (int i = 0; i < 10; ++i) b.barrier()->wait();
  std::vector<double> times;
  for (int i = 0; i < 50; ++i) {
    const auto t0 = Clock::now();
    b.barrier()->wait();
    times.push_back(since(t0));
  }
  report.check("barrier", "", fmt::format("{:.1f} us (median of 50, slowest rank)", slowest(acc, median(times)) * 1e6));
}

// One collective in every dtype and size; the FAIL text names each rank with wrong elements.
void checkResults(Accelerator& acc, Report& report, Backend& b, const std::string& op, bool corrupt) {
  const bool device = std::string(b.name()) == "nccl";
  std::vector<int64_t> wrong;
  for (DataType t : kDtypes) {
    for (size_t count : kCounts) {
      const size_t bytes = count * dtypeSize(t), out = op == "all_gather" ? bytes * b.size() : dtypeSize(t);
      Buffers buf(bytes, out, device);
      wrong.push_back(static_cast<int64_t>(verify(b, op, buf, t, count, corrupt)));
      corrupt = false;
    }
  }
  const std::vector<int64_t> all = acc.gather(wrong);
  std::vector<std::string> problems;
  for (size_t i = 0; i < all.size(); ++i) {
    if (!all[i]) continue;
    const size_t rank = i / wrong.size(), which = i % wrong.size();
    const DataType t = kDtypes[which / std::size(kCounts)];
    const size_t count = kCounts[which % std::size(kCounts)] * (op == "all_gather" ? b.size() : 1);
    problems.push_back(fmt::format("rank {}: {} of {} {} elements wrong", rank, all[i], count, dtypeName(t)));
  }
  const size_t shown = std::min<size_t>(3, problems.size());
  std::string problem = join({problems.begin(), problems.begin() + static_cast<long>(shown)}, "; ");
  if (problems.size() > shown) problem += fmt::format("; and {} more", problems.size() - shown);
  report.check(fmt::format("{} [{}]", op, b.name()), problem,
               fmt::format("{} dtypes x {} sizes, bit for bit", std::size(kDtypes), std::size(kCounts)));
}

// The median seconds of `run` over 5 timed runs after 2 warm-ups, every rank at once (each run
// starts at a barrier), the slowest rank's.
double timed(Accelerator& acc, const std::function<void()>& run) {
  Backend& cpu = acc.processGroup().backend();
  for (int i = 0; i < 2; ++i) run();
  std::vector<double> times;
  for (int i = 0; i < 5; ++i) {
    cpu.barrier()->wait();
    const auto t0 = Clock::now();
    run();
    times.push_back(since(t0));
  }
  return slowest(acc, median(times));
}

void reportBandwidth(Accelerator& acc, Report& report, Backend& b) {
  const std::string name = fmt::format("bandwidth [{}]", b.name());
  if (b.size() == 1) return report.line(name, "skipped", "one rank: nothing crosses a transport");
  const bool device = std::string(b.name()) == "nccl";
  const size_t bytes = device ? (256u << 20) : (16u << 20);
  Buffers buf(bytes, bytes, device);
  const double reduce = timed(acc, [&] { runOp(b, "all_reduce", buf, DataType::F32, bytes / 4)->wait(); });
  const double copy = timed(acc, [&] { buf.out.copyFrom(buf.in); });
  const double bus = 2.0 * (b.size() - 1) / b.size() * static_cast<double>(bytes) / reduce / 1e9;
  const double copy_gbps = static_cast<double>(bytes) / copy / 1e9;
  report.line(name, "figure",
              fmt::format("all_reduce of {} MiB f32: {:.2f} GB/s bus bandwidth, {:.2f} x a memory copy ({:.2f} GB/s, "
                          "every rank at once)",
                          bytes >> 20, bus, bus / copy_gbps, copy_gbps));
}

void checkTransport(Accelerator& acc, Report& report, Backend& b, bool& corrupt) {
  for (const char* op : {"all_reduce", "all_gather", "broadcast"}) {
    checkResults(acc, report, b, op, corrupt && std::string(op) == "all_reduce");
    if (std::string(op) == "all_reduce") corrupt = false;
  }
  reportBandwidth(acc, report, b);
}

// Each machine's matrix, found by its first rank and passed to rank 0 through the store.
void reportPeerAccess(Accelerator& acc, Report& report) {
  const std::string key = "accel/preflight/p2p/" + std::to_string(acc.processIndex());
  if (acc.isLocalMainProcess()) {
    const std::string text = hostName() + "\n" + peerAccessMatrix();
    acc.store().set(key, Bytes(text.begin(), text.end()));
  }
  std::vector<int32_t> firsts = acc.gather(std::vector<int32_t>{acc.isLocalMainProcess() ? 1 : 0});
  for (size_t r = 0; r < firsts.size() && acc.isMainProcess(); ++r) {
    if (!firsts[r]) continue;
    Bytes got = acc.store().get("accel/preflight/p2p/" + std::to_string(r));
    std::vector<std::string> lines = split(std::string(got.begin(), got.end()), '\n');
    const std::string name = "peer-to-peer [" + lines[0] + "]";
    if (lines.size() == 2 && startsWith(lines[1], "skipped: ")) {
      report.line(name, "skipped", lines[1].substr(9));
      continue;
    }
    for (size_t i = 1; i < lines.size(); ++i) report.line(i == 1 ? name : "", "figure", lines[i]);
  }
  acc.waitForEveryone();
}

}  // namespace

int runPreflight(Accelerator& acc) {
  Report report(acc);
  const std::string& corrupt_rank = env::kPreflightCorrupt.value();
  bool corrupt = !corrupt_rank.empty() && parseInt(corrupt_rank) == acc.processIndex();
  checkRendezvous(acc, report);
  checkStore(acc, report);
  checkBarrier(acc, report);
  checkTransport(acc, report, acc.processGroup().backend(), corrupt);
  if (acc.device().type == DeviceType::CUDA) checkTransport(acc, report, acc.deviceProcessGroup().backend(), corrupt);
  reportPeerAccess(acc, report);
  return report.finish();
}

}  // namespace accel::bench
