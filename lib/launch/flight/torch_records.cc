// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/flight/torch_records.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "lib/common/atomic_file.h"
#include "lib/common/call_names.h"
#include "lib/common/error.h"
#include "lib/common/socket.h"
#include "lib/common/strings.h"

namespace accel::launch::flight {

namespace {

using Clock = std::chrono::steady_clock;
using accel::flight::Call;
using accel::flight::State;
using nlohmann::json;

constexpr size_t kMaxAnswer = 64u << 20;

// torch's operation names (its profiling_name after "gloo:" or "nccl:") for the ones accel names.
const std::map<std::string, unsigned>& torchKinds() {
  static const std::map<std::string, unsigned> kinds = {{"all_reduce", 0},
                                                        {"allreduce", 0},
                                                        {"broadcast", 1},
                                                        {"all_gather", 2},
                                                        {"allgather", 2},
                                                        {"_allgather_base", 2},
                                                        {"all_gather_into_tensor", 2},
                                                        {"reduce_scatter", 4},
                                                        {"_reduce_scatter_base", 4},
                                                        {"reduce_scatter_tensor", 4},
                                                        {"gather", 5},
                                                        {"scatter", 6},
                                                        {"all_to_all", 7},
                                                        {"alltoall", 7},
                                                        {"alltoall_base", 7},
                                                        {"barrier", 9}};
  return kinds;
}

unsigned dtypeCode(const std::string& name) {
  for (unsigned i = 0; i < std::size(calls::kTorchDtypeNames); ++i) {
    if (name == calls::kTorchDtypeNames[i]) return i;
  }
  return 255;  // named "?": a type accel's collectives do not carry
}

uint64_t elements(const json& sizes) {
  if (!sizes.is_array() || sizes.empty() || !sizes.at(0).is_array()) return 0;
  uint64_t n = 1;
  for (const json& d : sizes.at(0)) n *= d.get<uint64_t>();
  return n;
}

Call torchCall(const json& e, unsigned group, int64_t offset) {
  Call c;
  c.group = group;
  c.seq = e.at("collective_seq_id").get<uint64_t>();
  const std::string name = e.at("profiling_name").get<std::string>();
  const std::string op = name.substr(name.find(':') == std::string::npos ? 0 : name.find(':') + 1);
  if (auto it = torchKinds().find(op); it != torchKinds().end()) {
    c.kind = it->second;
  } else {
    c.kind = calls::kForeignKind;
    c.name = op.empty() ? "?" : op;
  }
  c.op = 255;  // torch's dump does not say
  const json& dtypes = e.at("input_dtypes");
  c.dtype = dtypes.empty() ? 255 : dtypeCode(dtypes.at(0).get<std::string>());
  c.count = elements(e.at("input_sizes"));
  const std::string state = e.at("state").get<std::string>();
  c.state = state == "completed" || e.value("retired", false) ? State::Completed
            : state == "started"                              ? State::Started
                                                              : State::Scheduled;
  auto mono = [offset](const json& t) { return t.get<int64_t>() ? t.get<int64_t>() - offset : 0; };
  c.enqueued_ns = mono(e.at("time_created_ns"));
  c.started_ns = mono(e.value("time_discovered_started_ns", json(0)));
  c.ended_ns = mono(e.value("time_discovered_completed_ns", json(0)));
  return c;
}

}  // namespace

std::optional<std::string> askTorchServer(const std::string& socket, const std::string& handler,
                                          Clock::time_point deadline, std::string& why) {
  std::string error;
  const int fd = net::connectUnix(socket, deadline, error);
  if (fd < 0) {
    why = fmt::format("nothing answers at {}: {}", socket, error);
    return std::nullopt;
  }
  const std::string request = fmt::format(
      "POST /handler/{} HTTP/1.1\r\nHost: accel\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", handler);
  std::string answer;
  // MSG_NOSIGNAL: a rank that died after the connect must not end the collecting process.
  bool sent = ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size());
  while (sent && answer.size() < kMaxAnswer) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, net::remainingMs(deadline));
    if (ready <= 0) break;
    char buffer[65536];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      ::close(fd);
      const size_t body = answer.find("\r\n\r\n");
      if (answer.rfind("HTTP/1.1 200", 0) == 0 && body != std::string::npos) return answer.substr(body + 4);
      why = answer.empty() ? "it closed without an answer"
                           : fmt::format("it answered {}", answer.substr(0, answer.find('\r')));
      return std::nullopt;
    }
    answer.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  why = !sent                         ? "the question could not be sent"
        : answer.size() >= kMaxAnswer ? "its answer was too long"
                                      : "it did not answer in time";
  return std::nullopt;
}

RankFlight torchFlight(const json& dump, int rank, long long pid, int64_t read_ns, int64_t realtime_offset_ns) {
  try {
    RankFlight f;
    f.read_ns = read_ns;
    f.realtime_offset_ns = realtime_offset_ns;
    f.dump.rank = rank;
    f.dump.pid = pid;
    // Groups numbered by torch's group name ("0", "1", …), which every rank, member or not, gives
    // a group alike (its pg_id counts only the groups a rank is in). Groups a rank is not in stay
    // rank -1. Point-to-point entries carry the last collective's number: left out.
    const json none = json::array();
    for (const json& e : dump.contains("entries") ? dump.at("entries") : none) {
      if (e.value("is_p2p", false)) continue;
      const json& names = e.at("process_group");
      const auto number = parseInt(names.at(0).get<std::string>());
      if (!number || *number < 0 || *number >= static_cast<long long>(accel::flight::kMaxGroups)) continue;
      const auto pg = static_cast<size_t>(*number);
      if (pg >= f.dump.groups.size()) f.dump.groups.resize(pg + 1, {"", 0, -1});
      f.dump.groups[pg] = {fmt::format("torch pg {} ({})", *number, names.at(1).get<std::string>()), 0, rank};
      f.dump.calls.push_back(torchCall(e, static_cast<unsigned>(pg), realtime_offset_ns));
    }
    f.dump.written = f.dump.calls.size();
    f.dump.capacity = static_cast<uint32_t>(f.dump.calls.size());
    return f;
  } catch (const json::exception& e) {
    throw Error(fmt::format("torch's flight record did not read: {}", e.what()));
  }
}

// torch 2.15's handlers: its NCCL recorder's two; its Gloo recorder's JSON and accel's hook's
// pickle of it (its groups repaired: torch_hook.py).
std::optional<RankFlight> askTorchRecord(const TorchRank& r, Clock::time_point deadline, std::string& why,
                                         std::string& pickle_handler) {
  const int64_t now = accel::flight::nowNs(), offset = accel::flight::realtimeOffsetNs();
  std::optional<RankFlight> nccl;
  try {
    if (r.nccl) {
      if (const auto body = askTorchServer(r.socket, "dump_nccl_trace_json", deadline, why)) {
        nccl = torchFlight(json::parse(*body), r.rank, r.pid, now, offset);
        pickle_handler = "dump_nccl_trace_pickle";
        if (!nccl->dump.calls.empty()) return nccl;
      }
    }
    const auto body = askTorchServer(r.socket, "fr_trace_json", deadline, why);
    if (!body) return nccl;
    pickle_handler = "accel_fr_pickle";
    return torchFlight(json::parse(*body), r.rank, r.pid, now, offset);
  } catch (const std::exception& e) {
    why = e.what();
    return std::nullopt;
  }
}

namespace {

TorchAnswer readTorchRank(const TorchRank& r, Clock::time_point deadline, double seconds,
                          const std::string& pickle_dir) {
  TorchAnswer a;
  std::string why, pickle_handler;
  const auto record = askTorchRecord(r, deadline, why, pickle_handler);
  if (!record) {
    a.missing = why == "it did not answer in time" ? fmt::format("it did not answer within {:g} s", seconds) : why;
    return a;
  }
  a.flight = encodeFlight(*record);
  if (pickle_dir.empty()) return a;
  if (const auto pickle = askTorchServer(r.socket, pickle_handler, deadline, why)) {
    try {
      writeFileAtomic(fmt::format("{}/torch_rank_{}", pickle_dir, r.rank), *pickle, true);
    } catch (const Error&) {
      // The JSON record is what the verdict reads; the pickle is for torch's own tool.
    }
  }
  return a;
}

}  // namespace

std::vector<TorchAnswer> readTorchRanks(const std::vector<TorchRank>& ranks, std::chrono::milliseconds limit,
                                        const std::string& pickle_dir) {
  std::vector<TorchAnswer> answers(ranks.size());
  const auto deadline = Clock::now() + limit;
  const double seconds = static_cast<double>(limit.count()) / 1000.0;
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ranks.size(); ++i) {
    threads.emplace_back([&, i] { answers[i] = readTorchRank(ranks[i], deadline, seconds, pickle_dir); });
  }
  for (auto& t : threads) t.join();
  return answers;
}

}  // namespace accel::launch::flight
