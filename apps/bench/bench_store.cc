// SPDX-License-Identifier: Apache-2.0
// accel-bench store: a TCPStore server in this process and N clients (threads, or forked
// processes): set+get operations per second, and the time for all N to pass a store barrier
// (add on a counter; the last arrival sets the release key everybody waits for), timed after a
// first, aligning barrier; the slowest client's time is reported.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "apps/bench/bench.h"
#include "lib/common/error.h"
#include "runtime/store/tcp_store.h"

namespace accel::bench {

namespace {

using Clock = std::chrono::steady_clock;

struct ClientResult {
  double ops_seconds = 0;
  double barrier_seconds = 0;
};

ClientResult client(int port, int rank, int ranks, int ops) {
  TCPStoreOptions o;
  o.rank = -1;  // anonymous: the benchmark's clients are not ranks of a job
  o.timeout = std::chrono::seconds(120);
  TCPStore store("127.0.0.1", port, o);
  const Bytes value(16, 'x');
  ClientResult r;
  store.add("ready", 1);
  store.wait({"go"});
  auto t0 = Clock::now();
  for (int i = 0; i < ops; ++i) {
    std::string key = "k" + std::to_string(rank) + "/" + std::to_string(i);
    store.set(key, value);
    store.get(key);
  }
  auto t1 = Clock::now();
  // A first barrier absorbs the skew between clients; the second one is what is timed.
  for (const char* name : {"align", "barrier"}) {
    auto start = Clock::now();
    if (store.add(name, 1) == ranks) store.set(std::string(name) + "/done", toBytes("1"));
    store.wait({std::string(name) + "/done"});
    r.barrier_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  }
  r.ops_seconds = std::chrono::duration<double>(t1 - t0).count();
  return r;
}

}  // namespace

int runStore(const Args& a) {
  TCPStoreOptions server_options;
  server_options.is_server = true;
  server_options.rank = -1;
  server_options.timeout = std::chrono::seconds(120);
  TCPStore server("127.0.0.1", 0, server_options);
  const int port = server.port();
  std::vector<ClientResult> results(static_cast<size_t>(a.store_ranks));
  std::vector<std::thread> threads;
  std::vector<pid_t> children;
  int pipe_fd[2] = {-1, -1};
  if (a.store_processes && ::pipe(pipe_fd) != 0) {
    throw Error(fmt::format("accel-bench store: cannot create a pipe: {}", std::strerror(errno)));
  }
  for (int r = 0; r < a.store_ranks; ++r) {
    if (a.store_processes) {
      pid_t pid = ::fork();
      if (pid == 0) {
        ClientResult res = client(port, r, a.store_ranks, a.store_ops);
        double out[2] = {res.ops_seconds, res.barrier_seconds};
        (void)!::write(pipe_fd[1], out, sizeof out);
        _exit(0);
      }
      children.push_back(pid);
    } else {
      threads.emplace_back([&, r] { results[static_cast<size_t>(r)] = client(port, r, a.store_ranks, a.store_ops); });
    }
  }
  server.wait({"ready"}, std::chrono::seconds(120));
  // Every client checks in; a client that died before it did would otherwise be waited for forever.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (int64_t ready = 0; (ready = server.add("ready", 0)) < a.store_ranks;) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw Error(fmt::format("accel-bench store: only {} of {} clients checked in within 120 s", ready, a.store_ranks),
                  "a client failed to start or connect; see its error above");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  server.set("go", toBytes("1"));
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < children.size(); ++i) {
    double in[2];
    if (::read(pipe_fd[0], in, sizeof in) == sizeof in) results[i] = {in[0], in[1]};
    ::waitpid(children[i], nullptr, 0);
  }
  double slowest_ops = 0, slowest_barrier = 0;
  for (const auto& r : results) {
    slowest_ops = std::max(slowest_ops, r.ops_seconds);
    slowest_barrier = std::max(slowest_barrier, r.barrier_seconds);
  }
  const double total_ops = 2.0 * a.store_ops * a.store_ranks;
  if (a.json) {
    std::printf("{\"store_clients\": %d, \"mode\": \"%s\", \"ops_per_s\": %.0f, \"barrier_ms\": %.3f}\n", a.store_ranks,
                a.store_processes ? "processes" : "threads", total_ops / slowest_ops, slowest_barrier * 1e3);
  } else {
    std::printf("store: %d %s, %d set+get pairs each: %.0f ops/s; barrier of %d clients: %.3f ms\n", a.store_ranks,
                a.store_processes ? "processes" : "threads", a.store_ops, total_ops / slowest_ops, a.store_ranks,
                slowest_barrier * 1e3);
  }
  return 0;
}

}  // namespace accel::bench
