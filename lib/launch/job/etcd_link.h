// SPDX-License-Identifier: Apache-2.0
// The job channel where the machines meet in etcd (--rdzv_backend etcd or etcd-v2): machine 0 is
// elected there, so losing any machine, the first one included, does not end the job.
//   - Every launcher holds an etcd lease (its time: the heartbeat timeout; kept alive by a thread
//     of its own, etcd/lease_keeper.h) and registers under it (PREFIX/RUN_ID/members/LEASE).
//   - Machine 0 is the launcher whose create of PREFIX/RUN_ID/hub succeeds: etcd orders the
//     creates, so every machine computes the same winner. The key carries its job channel's
//     address and the job's id; the others join it there (JobMember) and it decides (JobHub).
//   - When machine 0 is lost, each survivor stops its round, waits until etcd drops the lost
//     one's key (its lease expired), and claims the key again; the new machine 0 continues the
//     job: the next round, the restarts so far (PREFIX/RUN_ID/state), and it forms that round
//     as soon as the machines registered in etcd rejoined.
//   - The end is written to PREFIX/RUN_ID/verdict, so that a survivor that lost machine 0 at
//     the end follows it instead of going on.
// Keys hold host names, addresses and counts, never the job's token. Different run ids never
// share a key. An endpoint that does not answer is an error within the join timeout, naming it;
// one that answers and is not etcd is a usage error at once.
#pragma once

#include <memory>

#include "lib/launch/job/job_link.h"

namespace accel::launch::job {

std::unique_ptr<JobLink> makeEtcdLink(const plan::LaunchPlan& plan);

}  // namespace accel::launch::job
