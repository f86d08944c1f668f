// SPDX-License-Identifier: Apache-2.0
#include "lib/launch/job/question_routes.h"

namespace accel::launch::job {

long long QuestionRoutes::add(int asker, long long their_id) {
  const auto now = std::chrono::steady_clock::now();
  while (!routes_.empty() && (routes_.size() >= kMaxRoutes || now - routes_.begin()->second.since > kRouteLife)) {
    routes_.erase(routes_.begin());  // ids grow: the first is the oldest
  }
  const long long id = next_++;
  routes_[id] = {asker, their_id, now};
  return id;
}

std::optional<QuestionRoutes::Route> QuestionRoutes::take(long long id) {
  auto it = routes_.find(id);
  if (it == routes_.end()) return std::nullopt;
  Route r = it->second;
  routes_.erase(it);
  return r;
}

}  // namespace accel::launch::job
