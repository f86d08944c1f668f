// SPDX-License-Identifier: Apache-2.0
// The defaults that several layers share, each named once. Where users know a value from
// torchrun, torch.distributed or Accelerate, it is theirs, so a job behaves the same under accel.
#pragma once

#include <chrono>

namespace accel::defaults {

// MASTER_PORT / --main_process_port when none is given (torchrun's and Accelerate's).
inline constexpr int kMainProcessPort = 29500;

// A store operation or rendezvous (torch's TCPStore: 300 s).
inline constexpr std::chrono::milliseconds kStoreTimeout = std::chrono::seconds(300);
// The Accelerator's rendezvous and collectives: how long one waits for its peers before it fails
// naming them (--collective_timeout, ACCEL_COLLECTIVE_TIMEOUT; in Python, InitProcessGroupKwargs'
// timeout). torch's NCCL default: a lost peer is named within minutes, not Gloo's half hour.
inline constexpr std::chrono::milliseconds kCollectiveTimeout = std::chrono::minutes(10);
// One Gloo collective (torch.distributed's default process-group timeout).
inline constexpr std::chrono::milliseconds kGlooTimeout = std::chrono::minutes(30);
// One NCCL collective before the watchdog aborts the communicator (torch's NCCL default).
inline constexpr std::chrono::milliseconds kNcclTimeout = std::chrono::minutes(10);
// Work::wait() when the caller gives no timeout.
inline constexpr std::chrono::milliseconds kWorkWaitTimeout = std::chrono::minutes(30);

// Several machines: how long machine 0's launcher waits for the others to join, and they for it
// (torchrun's rendezvous join_timeout, which --rdzv_conf join_timeout=N sets as there).
inline constexpr double kJoinTimeoutSeconds = 600;
// Several machines: silence on the job channel after which a machine counts as lost
// (--heartbeat_timeout, ACCEL_HEARTBEAT_TIMEOUT). Heartbeats go every sixth of it.
inline constexpr double kHeartbeatTimeoutSeconds = 30;

// A launcher started by a head (`accel launch --from_head`) waits this long for its orders: the
// head writes them at once, and ssh has connected before the command runs.
inline constexpr double kOrdersTimeoutSeconds = 60;

// Seconds between SIGTERM and SIGKILL when the launcher stops workers (--grace_period).
inline constexpr double kGracePeriodSeconds = 10;
// How long a rank waits for a checkpoint directory held by a rank of an earlier round of the same
// run (a lost machine's, which its launcher stops within its heartbeat timeout and grace period).
inline constexpr std::chrono::milliseconds kEarlierRoundLockWait = std::chrono::seconds(60);

// Every rank's stack (`accel stacks`, and before a collective timeout, a lost machine or
// --hang_timeout stops a job): how long the tools (py-spy, gdb) may take on one machine
// (ACCEL_STACKS_TIMEOUT; 0 turns the automatic stacks off), and how much longer machine 0 waits
// for the other machines' stacks to arrive.
inline constexpr double kStacksTimeoutSeconds = 4;
inline constexpr double kStacksSlackSeconds = 1.5;

// A duration as the seconds flags and ACCEL_* variables speak.
inline double seconds(std::chrono::milliseconds d) { return static_cast<double>(d.count()) / 1000; }

// A setting in seconds (flags and ACCEL_* variables take decimals) as a duration for clocks.
inline std::chrono::milliseconds fromSeconds(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

}  // namespace accel::defaults
