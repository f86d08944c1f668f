// SPDX-License-Identifier: Apache-2.0
// Machine 0's record of the questions about ranks it passes on (rank_questions.h, job_link.h:
// ask, tell): who asked (machine k, 0 for its own launcher) and under which id, by the id it
// gave the question when it sent it on. Bounded: at most kMaxRoutes, each forgotten after
// kRouteLife (the asker's own patience is shorter). Pure; single-threaded.
#pragma once

#include <chrono>
#include <map>
#include <optional>

namespace accel::launch::job {

class QuestionRoutes {
 public:
  struct Route {
    int asker;
    long long their_id;
    std::chrono::steady_clock::time_point since;
  };
  static constexpr size_t kMaxRoutes = 256;
  static constexpr std::chrono::seconds kRouteLife{5};

  // Remembers a question; returns the id to send it on with.
  long long add(int asker, long long their_id);
  // The route of an answered question, forgotten now; nullopt when it was forgotten before.
  std::optional<Route> take(long long id);

 private:
  std::map<long long, Route> routes_;
  long long next_ = 1;
};

}  // namespace accel::launch::job
