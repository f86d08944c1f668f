// SPDX-License-Identifier: Apache-2.0
// Every rank's stack from the machines of a job, gathered by the launcher that leads (machine 0,
// or a launcher alone): each gathering waits for the machines that owe their stacks until its
// deadline, then is handed back whole, naming the machines that sent none. Stacks travel the job
// channel as parts (job_messages.h: sp, sd) that fit its bounds; a rank's whole text is cut at
// kMaxStackText. Pure bookkeeping; single-threaded.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lib/launch/job/job_messages.h"
#include "lib/launch/stacks/collect_stacks.h"

namespace accel::launch::job {

inline constexpr size_t kMaxStackText = 512 * 1024;
inline constexpr size_t kMaxFlightText = 256 * 1024;  // a rank's flight record (flight_text.h): kSentCalls fit

class StackGatherings {
 public:
  using Clock = std::chrono::steady_clock;
  struct Owed {
    int machine = 0;
    std::string host;
  };
  struct Finished {
    int asker = 0;           // the machine whose `accel stacks` it answers
    long long asker_id = 0;  // ... and its question's id there; 0: it comes before a stop
    stacks::GatheredStacks stacks;
  };

  // A gathering from `machines` that ends by `wait` at the latest; returns its id (for the
  // machines' sw). `why`: what stops the job once it ended ("" for a question).
  long long start(const std::vector<Owed>& machines, std::chrono::milliseconds wait, int asker, long long asker_id,
                  std::string why);
  // From machine `machine`: a part of a rank's stack, every one it had, or (lost) nothing more.
  void part(long long id, int machine, const stacks::RankStack& piece);
  void done(long long id, int machine);
  void lost(int machine);

  // The gatherings that every machine answered, or whose deadline passed: removed.
  std::vector<Finished> finished();
  int timeoutMs() const;  // until the nearest deadline; -1 when none runs
  bool stopping() const;  // one that stops the job runs

 private:
  struct Gathering {
    std::map<int, std::string> owed;  // machine -> host, until it is done
    std::map<std::pair<int, int>, stacks::RankStack> ranks;
    Clock::time_point started, deadline;
    Finished out;
  };
  stacks::GatheredStacks result(Gathering& g) const;

  std::map<long long, Gathering> running_;
  long long next_id_ = 1;
};

// The job's stacks as machine 0 relays them to the machine whose question they answer: parts in
// order, then a done of machine -1 whose note holds the gathering's notes, joined by "; ".
class RelayedStacks {
 public:
  void part(const job::StackPart& part);
  stacks::GatheredStacks done(const job::StacksDone& done);

 private:
  std::map<long long, stacks::GatheredStacks> arriving_;
};

// A rank's stack as the messages that carry it (at least one), and one of them back as the piece
// StackGatherings::part takes.
std::vector<job::StackPart> stackParts(long long id, const stacks::RankStack& stack);
stacks::RankStack stackPiece(const job::StackPart& part);

}  // namespace accel::launch::job
