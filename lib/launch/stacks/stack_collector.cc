// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/stacks/stack_collector.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/common/error.h"
#include "lib/common/process/child.h"
#include "lib/common/write_fully.h"

namespace accel::launch::stacks {

namespace {

using nlohmann::json;

// What the launcher takes from the collecting process at most: many ranks' deep stacks.
constexpr size_t kMaxOutput = 64u << 20;
// How much longer than the tools' limit the process may take to write and end.
constexpr auto kMargin = std::chrono::seconds(1);

}  // namespace

process::ChildSpec collectorChild(std::function<int()> body) {
  process::ChildSpec spec;
  spec.own_group = true;
  spec.death_signal = SIGKILL;
  spec.body = std::move(body);
  return spec;
}

StackCollector::~StackCollector() { stop(); }

void StackCollector::stop() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  pid_ = 0;
}

void StackCollector::start(const std::vector<RunningRank>& ranks, const std::map<std::string, std::string>& env,
                           std::chrono::milliseconds limit, CollectBefore before) {
  stop();
  ranks_ = ranks;
  output_.clear();
  ready_.reset();
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) {
    ready_ = finish(fmt::format("the launcher could not make a pipe: {}", std::strerror(errno)));
    return;
  }
  // The tools run from the collecting process, which writes their answer on the pipe.
  const int out = ends[1];
  pid_t pid = -1;
  try {
    pid = process::spawnChild(collectorChild([&ranks, &env, limit, out, &before] {
      const std::map<int, std::string> flights = before.run ? before.run() : std::map<int, std::string>{};
      GatheredStacks g;
      g.ranks = collectStacks(ranks, env, limit);
      for (RankStack& s : g.ranks) {
        if (auto it = flights.find(s.rank); it != flights.end()) s.flight = it->second;
      }
      writeFully(out, encodeStacks(g));
      return 0;
    }));
  } catch (const Error& e) {
    ::close(ends[0]);
    ::close(ends[1]);
    ready_ = finish(fmt::format("the launcher could not start the collecting process: {}", e.what()));
    return;
  }
  ::close(ends[1]);
  pid_ = pid;
  fd_ = ends[0];
  limit_ = before.limit + limit;
  give_up_at_ = Clock::now() + before.limit + limit + kMargin;
}

void StackCollector::addPollFds(std::vector<pollfd>& fds, int& timeout_ms) const {
  if (ready_) {
    timeout_ms = 0;
    return;
  }
  if (fd_ < 0) return;
  fds.push_back({fd_, POLLIN, 0});
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(give_up_at_ - Clock::now()).count();
  const int due = static_cast<int>(std::max<long long>(0, left));
  if (timeout_ms < 0 || due < timeout_ms) timeout_ms = due;
}

std::optional<std::vector<RankStack>> StackCollector::service(const std::vector<pollfd>& fds) {
  if (ready_) return std::exchange(ready_, std::nullopt);
  if (fd_ < 0) return std::nullopt;
  for (const pollfd& p : fds) {
    if (p.fd != fd_ || !(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char buffer[65536];
    const ssize_t n = ::read(fd_, buffer, sizeof buffer);
    if (n > 0 && output_.size() < kMaxOutput) output_.append(buffer, static_cast<size_t>(n));
    if (n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN))) return std::nullopt;
    ::close(fd_);  // it wrote all and ended: nothing of its is left to kill
    fd_ = -1;
    pid_ = 0;
    auto decoded = decodeStacks(output_);
    if (!decoded) return finish("the process that ran the tools ended without an answer (killed?)");
    return decoded->ranks;
  }
  if (Clock::now() >= give_up_at_) {
    return finish(fmt::format("the tools had not answered after {:g} s",
                              std::chrono::duration<double>(limit_ + kMargin).count()));
  }
  return std::nullopt;
}

std::vector<RankStack> StackCollector::finish(const std::string& problem) {
  stop();
  std::vector<RankStack> out;
  for (const RunningRank& r : ranks_) {
    RankStack s;
    s.rank = r.rank;
    s.pid = r.pid;
    s.problem = problem;
    out.push_back(std::move(s));
  }
  return out;
}

std::string encodeStacks(const GatheredStacks& g) {
  json ranks = json::array();
  for (const RankStack& s : g.ranks) {
    ranks.push_back({{"rank", s.rank},
                     {"pid", s.pid},
                     {"machine", s.machine},
                     {"host", s.host},
                     {"tool", s.tool},
                     {"text", s.text},
                     {"summary", s.summary},
                     {"problem", s.problem},
                     {"flight", s.flight}});
  }
  json j = {{"why", g.why}, {"ranks", ranks}, {"notes", g.notes}, {"seconds", g.seconds}, {"machines", g.machines}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<GatheredStacks> decodeStacks(const std::string& text) {
  try {
    const json j = json::parse(text);
    GatheredStacks g;
    g.why = j.at("why").get<std::string>();
    g.notes = j.at("notes").get<std::vector<std::string>>();
    g.seconds = j.at("seconds").get<double>();
    g.machines = j.at("machines").get<int>();
    for (const json& r : j.at("ranks")) {
      RankStack s;
      s.rank = r.at("rank").get<int>();
      s.pid = r.at("pid").get<pid_t>();
      s.machine = r.at("machine").get<int>();
      s.host = r.at("host").get<std::string>();
      s.tool = r.at("tool").get<std::string>();
      s.text = r.at("text").get<std::string>();
      s.summary = r.at("summary").get<std::string>();
      s.problem = r.at("problem").get<std::string>();
      s.flight = r.value("flight", std::string());
      g.ranks.push_back(std::move(s));
    }
    return g;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

}  // namespace accel::launch::stacks
