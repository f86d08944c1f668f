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

StackCollector::~StackCollector() = default;

void StackCollector::start(const std::vector<RunningRank>& ranks, const std::map<std::string, std::string>& env,
                           std::chrono::milliseconds limit, CollectBefore before) {
  ranks_ = ranks;
  ready_.reset();
  auto body = [&ranks, &env, limit, &before](int out) {
    const std::map<int, std::string> flights = before.run ? before.run() : std::map<int, std::string>{};
    GatheredStacks g;
    g.ranks = collectStacks(ranks, env, limit);
    for (RankStack& s : g.ranks) {
      if (auto it = flights.find(s.rank); it != flights.end()) s.flight = it->second;
    }
    writeFully(out, encodeStacks(g));
    return 0;
  };
  try {
    child_.start(body, Clock::now() + before.limit + limit + kMargin, kMaxOutput);
  } catch (const Error& e) {
    ready_ = finish(fmt::format("the launcher could not start the collecting process: {}", e.what()));
    return;
  }
  limit_ = before.limit + limit;
}

void StackCollector::addPollFds(std::vector<pollfd>& fds, int& timeout_ms) const {
  if (ready_) {
    timeout_ms = 0;
    return;
  }
  child_.addPollFds(fds, timeout_ms);
}

std::optional<std::vector<RankStack>> StackCollector::service(const std::vector<pollfd>& fds) {
  if (ready_) return std::exchange(ready_, std::nullopt);
  auto answer = child_.service(fds);
  if (!answer) return std::nullopt;
  if (answer->timed_out) {
    return finish(fmt::format("the tools had not answered after {:g} s",
                              std::chrono::duration<double>(limit_ + kMargin).count()));
  }
  auto decoded = decodeStacks(answer->text);
  if (!decoded) return finish("the process that ran the tools ended without an answer (killed?)");
  return decoded->ranks;
}

std::vector<RankStack> StackCollector::finish(const std::string& problem) {
  child_.stop();
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
