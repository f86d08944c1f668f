// SPDX-License-Identifier: Apache-2.0
// The side of the job channel on machines 1..N-1 (job_link.h): joins machine 0's launcher,
// reports this machine's failures, interrupts and round ends, and follows machine 0's orders.
// When machine 0 goes silent for the heartbeat timeout, its connection closes, or it sends a
// line this launcher cannot read, the job is over for this machine: its workers are stopped and
// the launch ends naming machine 0. A machine 0 of another protocol version ends it with exit 2,
// naming both versions. A connection that machine 0 closes before the start without a word (its
// door was crowded: hub_door.h) is made again, until the join timeout.
#pragma once

#include <memory>
#include <optional>

#include "lib/launch/job/job_link.h"

namespace accel::launch::job {

// `hub`: where machine 0's launcher is, where etcd elected it (the plan's where not). Under
// etcd a lost machine 0 ends the rendezvous with HubLost and the round with an End marked
// hub_lost, for the link that elects the next (etcd_link.h).
std::unique_ptr<JobLink> makeMemberLink(const plan::LaunchPlan& plan, std::optional<HubAddress> hub = std::nullopt);

}  // namespace accel::launch::job
