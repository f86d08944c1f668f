// SPDX-License-Identifier: Apache-2.0
// The one way a plan is made: from the resolved settings and the facts, by a pure function, for
// round 0 and for every round after it. What a round knows that the first plan could not comes in
// as the Round: the layout machine 0 settled at the join (this machine's rank in it) and the
// round's MASTER_PORT. A launch of one machine, of one machine among several, a hostfile head,
// an MPI launch and an srun head are all planned here (launch_plan.h's Kind).
#pragma once

#include <optional>
#include <vector>

#include "lib/launch/facts/facts.h"
#include "lib/launch/plan/launch_plan.h"
#include "lib/launch/settings/launch_settings.h"

namespace accel::launch::plan {

struct Round {
  int number = 0;
  int port = 0;                      // the round's MASTER_PORT as machine 0 gave it; 0: none yet
  std::optional<int> machine;        // this machine's rank in the settled layout
  std::vector<MachineShare> layout;  // every machine's share as machine 0 settled it; empty: not yet
  int restarts = 0;                  // the failures restarted before it (TORCHELASTIC_RESTART_COUNT)
  std::string master_addr{};         // machine 0's address where etcd elected it; "": the settings'
};

// Throws UsageError (or ConfigError) naming the setting, where it came from and a fix, and Error
// for a busy port that other machines will connect to.
LaunchPlan build(const settings::LaunchSettings& s, const facts::Facts& f, const Round& round = {});

}  // namespace accel::launch::plan
