// SPDX-License-Identifier: Apache-2.0
// A worker linking libaccel_runtime, for tests run under `accel launch` (or started by hand):
//   runtime_worker helpers FILE   exercise every Accelerator helper; print "ok NAME" or
//                                 "FAIL NAME: why" per helper; exit 1 if any failed
//   runtime_worker die RANK       all ranks all-reduce; RANK exits in the middle; the others
//                                 print the error they get ("error: …") and exit 3
//   runtime_worker reduce-loop    all ranks all-reduce 16 MiB until one fails (to be SIGKILLed):
//                                 "looping" once started, "round N" every 10 all-reduces, then
//                                 "error: …" and exit 3
//   runtime_worker mismatch HOW   the last rank's 4th collective differs (HOW: extra, count,
//                                 dtype, all_to_all: the others' all_to_all is its all_to_all_v);
//                                 every rank prints "error after T s: …" and exits 3
//   runtime_worker straggle S     the last rank sleeps S s before a barrier the others wait at
//   runtime_worker save-loop DIR  saves checkpoints of steps 1, 2, … forever (to be SIGKILLed)
//   runtime_worker check DIR      loads DIR's latest checkpoint, checks every byte; prints the step
//   runtime_worker barrier RANK   prints "rank R round N past barrier at T" (T: wall clock, s)
//                                 after the first barrier; in round 0 RANK (-1: none) then exits
//                                 7 and the others wait to be stopped (scripts/bench_cluster)
//   runtime_worker spin RANK      all-reduces; after the fifth, rank RANK stays in its own loop
//                                 (spin()) without a word and the others wait for it in the
//                                 sixth: a hung job, for --hang_timeout and collective timeouts
//   runtime_worker quiet S        all-reduces without a word for S s, then exits 0: a silent job
//                                 that is not hung (--hang_timeout sees its collectives)
//   runtime_worker nccl-stall S   (CUDA, nccl_stall.h) rank 0's stream stalls; a barrier on the
//                                 NCCL group must fail after S s: prints "error after T s: …"
//                                 and exits 3
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <numeric>
#include <sstream>
#include <thread>

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/state/accelerator.h"
#include "tests/workers/nccl_stall.h"

using namespace accel;

namespace {

int failures = 0;

template <typename T> std::string show(const std::vector<T>& v) {
  std::ostringstream s;
  for (size_t i = 0; i < v.size(); ++i) s << (i ? "," : "") << v[i];
  return s.str();
}

void expect(bool ok, const std::string& name, const std::string& detail = "") {
  std::cout << (ok ? "ok " + name : "FAIL " + name + ": " + detail) << std::endl;
  failures += ok ? 0 : 1;
}

int helpers(Accelerator& acc, const std::string& file) {
  const int rank = acc.processIndex(), world = acc.numProcesses();
  const char* env_rank = std::getenv("RANK");  // unset: a world of one without a launcher
  const char* env_world = std::getenv("WORLD_SIZE");
  expect(rank == (env_rank ? std::atoi(env_rank) : 0) && world == (env_world ? std::atoi(env_world) : 1), "ranks");
  expect(acc.isMainProcess() == (rank == 0) && acc.isLastProcess() == (rank == world - 1) &&
             acc.isLocalMainProcess() == (acc.localProcessIndex() == 0),
         "roles");
  expect(acc.device().str() == "cpu", "device", acc.device().str());
  expect(&acc.deviceProcessGroup() == &acc.processGroup(), "device_process_group");  // CPU: one group
  acc.waitForEveryone();
  acc.mainProcessFirst([&] {
    if (acc.isMainProcess()) std::ofstream(file) << "written by rank 0";
    std::ifstream in(file);
    std::string text;
    std::getline(in, text);
    expect(text == "written by rank 0", "main_process_first", text);
  });
  acc.print("printed by the main process only");
  std::vector<int32_t> mine(static_cast<size_t>(rank + 1), rank);
  auto all = acc.gather(mine);
  std::vector<int32_t> want;
  for (int r = 0; r < world; ++r) want.insert(want.end(), static_cast<size_t>(r + 1), r);
  expect(all == want, "gather", show(all));
  std::vector<int64_t> dataset(10);
  std::iota(dataset.begin(), dataset.end(), 0);
  auto share = acc.splitBetweenProcesses(dataset);
  auto padded = acc.splitBetweenProcesses(dataset, true);
  const size_t base = dataset.size() / static_cast<size_t>(world), extra = dataset.size() % static_cast<size_t>(world);
  expect(share.size() == base + (static_cast<size_t>(rank) < extra ? 1 : 0) && padded.size() == base + (extra ? 1 : 0),
         "split_between_processes", show(share) + " / " + show(padded));
  auto metrics = acc.gatherForMetrics(padded, dataset.size());
  expect(metrics == dataset, "gather_for_metrics", show(metrics));
  std::vector<float> value = {static_cast<float>(rank + 1)};
  acc.reduce(value);
  expect(value[0] == static_cast<float>(world * (world + 1) / 2), "reduce", show(value));
  std::vector<double> shared = rank == 0 ? std::vector<double>{7, 8, 9} : std::vector<double>{};
  acc.broadcast(shared);
  expect(shared == std::vector<double>{7, 8, 9}, "broadcast", show(shared));
  auto pad = acc.padAcrossProcesses(std::vector<int32_t>(static_cast<size_t>(rank + 1), 5), -1);
  expect(pad.size() == static_cast<size_t>(world) && pad.back() == (rank == world - 1 ? 5 : -1), "pad_across_processes",
         show(pad));
  acc.setSeed(42);
  std::vector<int64_t> draw = {static_cast<int64_t>(acc.rng()() >> 1)};
  auto draws = acc.gather(draw);
  expect(std::all_of(draws.begin(), draws.end(), [&](int64_t d) { return d == draws[0]; }), "set_seed", show(draws));
  acc.setSeed(42, true);
  draw = {static_cast<int64_t>(acc.rng()() >> 1)};
  draws = acc.gather(draw);
  expect(world == 1 || draws[0] != draws[1], "set_seed per process", show(draws));
  return failures ? 1 : 0;
}

int die(Accelerator& acc, int victim) {
  std::vector<float> data(1 << 20, 1.0f);
  acc.reduce(data);
  if (acc.processIndex() == victim) _exit(9);
  try {
    for (int i = 0; i < 100; ++i) acc.reduce(data);
  } catch (const std::exception& e) {
    // Returning (not _exit) is what a real program does: ~Accelerator keeps rank 0's store up
    // until the other survivors have left, so they can still learn who died.
    std::cerr << "error: " << e.what() << std::endl;
    return 3;
  }
  std::cerr << "no error" << std::endl;
  return 0;
}

int reduceLoop(Accelerator& acc) {
  std::vector<float> data(4 << 20, 1.0f);  // many chunks: a kill lands inside a collective
  acc.reduce(data, ReduceOp::Max);
  std::cout << "looping" << std::endl;
  try {
    for (long round = 1;; ++round) {
      for (int i = 0; i < 10; ++i) acc.reduce(data, ReduceOp::Max);
      std::cout << "round " << round << std::endl;
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << std::endl;
    return 3;
  }
}

// All-reduces over and over; after the fifth, rank `frozen` stops itself (SIGSTOP) inside the
// loop, the way a rank stopped from outside or hung in a debugger would. The others print
// "error after T s: …" (T from the start of the collective they wait in) and exit 3.
int freeze(Accelerator& acc, int frozen) {
  std::vector<float> data(1000, 1.0f);
  std::cout << "reducing" << std::endl;
  auto start = std::chrono::steady_clock::now();
  try {
    for (int i = 0;; ++i) {
      if (i == 5 && acc.processIndex() == frozen) ::raise(SIGSTOP);
      start = std::chrono::steady_clock::now();
      acc.reduce(data);
    }
  } catch (const std::exception& e) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cerr << "error after " << seconds << " s: " << e.what() << std::endl;
    return 3;
  }
}

// Where a hung rank is: a loop of its own, outside any collective (the stacks test names it).
[[noreturn]] __attribute__((noinline)) void spin() {
  for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

int spinning(Accelerator& acc, int stuck) {
  std::vector<float> data(1000, 1.0f);
  std::cout << "reducing" << std::endl;
  try {
    for (int i = 0;; ++i) {
      if (i == 5 && acc.processIndex() == stuck) spin();
      acc.reduce(data);
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << std::endl;
    return 3;
  }
}

// Each rank's clock is its own: the first element carries "my time is up" through the sum, so
// every rank leaves after the same collective.
int quiet(Accelerator& acc, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    std::vector<float> data(1000, 1.0f);
    data[0] = std::chrono::steady_clock::now() < end ? 0.0f : 1.0f;
    acc.reduce(data);
    if (data[0] > 0) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Three matching all_reduces, then the last rank deviates (`how`: extra, count, dtype), then
// every rank all_reduces once more and meets at a barrier. Prints "error after T s: …" (T from
// the deviating collective) and exits 3, or "no error" and exits 0.
// 999 of `data`'s floats, one third to each of three ranks: equal chunks, or the same as counts.
void allToAll(Accelerator& acc, std::vector<float>& data, bool with_counts) {
  Backend& b = acc.processGroup().backend();
  std::vector<float> out(999);
  const Tensor in = cpuTensor(data.data(), 999), to = cpuTensor(out.data(), out.size());
  const std::vector<size_t> thirds(3, 333);
  (with_counts ? b.allToAllV(in, to, thirds, thirds) : b.allToAll(in, to))->wait();
}

int mismatch(Accelerator& acc, const std::string& how) {
  std::vector<float> data(1000, 1.0f);
  for (int i = 0; i < 3; ++i) acc.reduce(data);
  const auto start = std::chrono::steady_clock::now();
  try {
    if (acc.isLastProcess()) {
      if (how == "extra") acc.reduce(data);
      std::vector<float> more(1001, 1.0f);
      std::vector<double> wider(1000, 1.0);
      if (how == "count") acc.reduce(more);
      if (how == "dtype") acc.reduce(wider);
      if (how == "all_to_all") allToAll(acc, data, true);
      if (how == "extra") acc.reduce(data);
    } else if (how == "all_to_all") {
      allToAll(acc, data, false);
    } else {
      acc.reduce(data);
    }
    acc.waitForEveryone();
  } catch (const std::exception& e) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cerr << "error after " << seconds << " s: " << e.what() << std::endl;
    return 3;
  }
  std::cout << "no error" << std::endl;
  return 0;
}

// The last rank sleeps S seconds before the barrier the others already wait at: with a shorter
// collective timeout they fail ("error after T s: …", exit 3) at that timeout.
int straggle(Accelerator& acc, int seconds) {
  const auto start = std::chrono::steady_clock::now();
  try {
    if (acc.isLastProcess()) std::this_thread::sleep_for(std::chrono::seconds(seconds));
    acc.waitForEveryone();
  } catch (const std::exception& e) {
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cerr << "error after " << took << " s: " << e.what() << std::endl;
    return 3;
  }
  return 0;
}

// `steps` all_reduces of a small vector, each after 10 ms of "work"; rank `slow` (-1: none)
// sleeps `ms` more before each, the way a rank on a slower machine, or with a slower data loader,
// comes late to every collective. Prints "done" and exits 0.
int slowRank(Accelerator& acc, int slow, int ms, int steps) {
  std::vector<float> data(1024, 1.0f);
  for (int i = 0; i < steps; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (acc.processIndex() == slow) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    acc.reduce(data);
  }
  std::cout << "done" << std::endl;
  return 0;
}

double wallClock() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

int barrierMark(Accelerator& acc, int fail_rank) {
  acc.waitForEveryone();
  const char* count = std::getenv("TORCHELASTIC_RESTART_COUNT");
  const int round = count ? std::atoi(count) : 0;
  std::printf("rank %d round %d past barrier at %.6f\n", acc.processIndex(), round, wallClock());
  std::fflush(stdout);
  if (round > 0 || fail_rank < 0) return 0;
  if (acc.processIndex() == fail_rank) {
    std::printf("rank %d failing at %.6f\n", fail_rank, wallClock());
    std::fflush(stdout);
    std::_Exit(7);
  }
  for (;;) ::pause();  // until the launcher stops this rank
}

// Every byte of step s's blobs is (s + blob) % 251: a torn or mixed checkpoint cannot pass.
CheckpointPart partFor(int64_t step) {
  CheckpointPart part;
  part.step = step;
  for (int blob = 0; blob < 3; ++blob) {
    part.blobs["blob" + std::to_string(blob)] =
        std::vector<uint8_t>(1 << 20, static_cast<uint8_t>((step + blob) % 251));
  }
  return part;
}

int saveLoop(Accelerator& acc, const std::string& dir) {
  int64_t first = hasCheckpoint(dir) ? loadCheckpoint(acc.processGroup().backend(), dir).step + 1 : 1;  // resume
  for (int64_t step = first;; ++step) {
    saveCheckpoint(acc.processGroup().backend(), dir, partFor(step));
    std::cout << "saved " << step << std::endl;
  }
}

int check(Accelerator& acc, const std::string& dir) {
  CheckpointPart part = loadCheckpoint(acc.processGroup().backend(), dir);
  bool ok = part.blobs == partFor(part.step).blobs;
  std::cout << (ok ? "intact step " : "DAMAGED step ") << part.step << std::endl;
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  try {
    AcceleratorOptions options;
    // Far above a loaded ThreadSanitizer run's time to notice a dead rank (a few seconds), so
    // the die test can tell "named at once" from "waited out the timeout".
    // ACCEL_COLLECTIVE_TIMEOUT, when set, is the test's own choice.
    const char* timeout = std::getenv("ACCEL_COLLECTIVE_TIMEOUT");
    if (!timeout || !*timeout) options.timeout = std::chrono::seconds(60);
    if (mode == "nccl-stall" && argc > 2) options.timeout = std::chrono::seconds(std::atoi(argv[2]));
    Accelerator acc(options);
    if (mode == "helpers" && argc > 2) return helpers(acc, argv[2]);
    if (mode == "die" && argc > 2) return die(acc, std::atoi(argv[2]));
    if (mode == "reduce-loop") return reduceLoop(acc);
    if (mode == "freeze" && argc > 2) return freeze(acc, std::atoi(argv[2]));
    if (mode == "spin" && argc > 2) return spinning(acc, std::atoi(argv[2]));
    if (mode == "quiet" && argc > 2) return quiet(acc, std::atof(argv[2]));
    if (mode == "mismatch" && argc > 2) return mismatch(acc, argv[2]);
    if (mode == "straggle" && argc > 2) return straggle(acc, std::atoi(argv[2]));
    if (mode == "slow-rank" && argc > 4)
      return slowRank(acc, std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]));
    if (mode == "save-loop" && argc > 2) return saveLoop(acc, argv[2]);
    if (mode == "barrier" && argc > 2) return barrierMark(acc, std::atoi(argv[2]));
    if (mode == "check" && argc > 2) return check(acc, argv[2]);
    if (mode == "nccl-stall" && argc > 2) return test::ncclStall(acc, std::atoi(argv[2]));
    std::cerr << "usage: runtime_worker helpers FILE | die RANK | reduce-loop | freeze RANK | spin RANK | quiet S | "
                 "mismatch extra|count|dtype | straggle S | barrier RANK | save-loop DIR | check DIR | nccl-stall S"
              << std::endl;
    return 64;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << std::endl;
    return 3;
  }
}
