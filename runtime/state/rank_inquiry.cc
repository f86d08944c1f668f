// SPDX-License-Identifier: Apache-2.0
#include "runtime/state/rank_inquiry.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "lib/common/socket.h"
#include "lib/common/strings.h"

namespace accel {

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMostAsked = 8;  // ranks asked about; the rest are counted

// Which ranks have left, as the store server saw their connections close (in that order).
std::string departedText(Store& quick) {
  if (!quick.check({kDepartedRanksKey})) return "";
  auto ranks = split(toString(quick.get(kDepartedRanksKey)), ',');
  std::string first = fmt::format("rank {} left the job first (its store connection closed)", ranks.front());
  if (ranks.size() == 1) return first;
  return first + "; since then: rank" + (ranks.size() > 2 ? "s " : " ") +
         join(std::vector<std::string>(ranks.begin() + 1, ranks.end()), ", ");
}

// One line from `fd` until `deadline`, or "".
std::string readLine(int fd, Clock::time_point deadline) {
  std::string line;
  char buffer[512];
  while (line.find('\n') == std::string::npos && line.size() < 8192) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, net::remainingMs(deadline)) <= 0) return "";
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    line.append(buffer, static_cast<size_t>(n));
  }
  return trim(line.substr(0, line.find('\n')));
}

}  // namespace

RankInquiry::RankInquiry(Store& store, std::string launcher_socket)
    : store_(store), launcher_socket_(std::move(launcher_socket)) {}

std::string RankInquiry::askLauncher(int rank) const { return askLauncher(rank, Clock::now() + kLookBack); }

std::string RankInquiry::askLauncher(int rank, std::chrono::steady_clock::time_point deadline) const {
  if (launcher_socket_.empty() || Clock::now() >= deadline) return "";
  std::string error;
  const int fd = net::connectUnix(launcher_socket_, deadline, error);
  if (fd < 0) return "";
  const std::string question = fmt::format("rank {}\n", rank);
  std::string answer;
  if (::send(fd, question.data(), question.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(question.size())) {
    answer = readLine(fd, deadline);
  }
  ::close(fd);
  return answer;
}

std::string RankInquiry::explain(const FailureClues& clues) const {
  std::vector<std::string> said;
  std::vector<int> ask = clues.absent;
  bool silent = clues.store_silent;
  if (!silent) {
    try {
      if (std::string departed = departedText(*store_.quickHandle(kLookBack)); !departed.empty()) {
        said.push_back(departed);
      }
    } catch (const StoreTimeout&) {
      silent = true;
    } catch (const std::exception& e) {
      said.push_back(fmt::format("the store that rank 0 hosts is gone ({}): rank 0 has exited", e.what()));
    }
  }
  if (silent) {
    said.push_back(
        fmt::format("the store that rank 0 hosts did not answer within {:g} s either: rank 0's process is "
                    "not running (stopped?) or its machine cannot be reached",
                    defaults::seconds(kLookBack)));
    const bool told = std::find(clues.told.begin(), clues.told.end(), 0) != clues.told.end();
    if (!told && std::find(ask.begin(), ask.end(), 0) == ask.end()) ask.insert(ask.begin(), 0);
  }
  const auto deadline = Clock::now() + kLookBack;  // for all the questions together
  for (size_t i = 0; i < ask.size() && i < kMostAsked; ++i) {
    if (std::string answer = askLauncher(ask[i], deadline); !answer.empty()) said.push_back(answer);
  }
  if (ask.size() > kMostAsked)
    said.push_back(fmt::format("and {} more rank(s) did not arrive", ask.size() - kMostAsked));
  return join(said, "; ");
}

}  // namespace accel
