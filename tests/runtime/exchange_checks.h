// SPDX-License-Identifier: Apache-2.0
// What all_to_all and all_to_all_v must return, and what every transport's front door refuses
// (backend.h), shared by the Gloo, shared-memory, hierarchical and NCCL tests like
// collective_checks.h, whose fill, placement and mismatch list they use.
#pragma once

#include "tests/runtime/collective_checks.h"

namespace accel::test {

// One rank's part: all_to_all and all_to_all_v (some pairs exchanging nothing), every dtype and
// count; each element tells its sender, receiver and place, so a misplaced chunk is seen.
void checkAllToAll(Backend& b, int rank, int world, const Placement& at, Mismatches& bad);

// One rank's part (a group of two or more on CPU memory): the front door's refusals
// (backend.h), the same on every transport: a root
// outside the group, a tensor in the other memory, sizes that break the contract. Then a barrier.
void checkMisuse(Backend& b, int rank, int world, Mismatches& bad);

}  // namespace accel::test
