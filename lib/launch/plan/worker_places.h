// SPDX-License-Identifier: Apache-2.0
// Where each local worker runs: its CPUs and the NUMA node its memory prefers, from the one
// setting that asks (in this order): --bind_cores_to_rank (DeepSpeed's equal shares of a core
// list), --numa-binding (or enable_cpu_affinity on a GPU job: numa_binding.h), enable_cpu_affinity
// on a CPU job (cpu_affinity.h); else unpinned. What a setting could not do is said in the plan's
// notes; what no launch can do is a UsageError.
#pragma once

#include <vector>

#include "lib/launch/facts/facts.h"
#include "lib/launch/plan/launch_plan.h"
#include "lib/launch/plan/numa_binding.h"
#include "lib/launch/settings/launch_settings.h"

namespace accel::launch::plan {

// One place per local worker (`count`), in local rank order.
std::vector<NumaPlace> workerPlaces(LaunchPlan& p, const settings::LaunchSettings& s, const facts::Facts& f, int count);

}  // namespace accel::launch::plan
