// SPDX-License-Identifier: Apache-2.0
// The steps a libtorch LRScheduler has taken: libtorch keeps the count protected and saves it
// nowhere, and the Accelerator must both set Python's initial step and checkpoint it. Internal
// to the component (torch_accelerator.cc, accelerator_state.cc).
#pragma once

#include <torch/optim/schedulers/lr_scheduler.h>

namespace accel::detail {

struct SchedulerSteps : torch::optim::LRScheduler {
  static unsigned& of(torch::optim::LRScheduler& s) { return s.*(&SchedulerSteps::step_count_); }
};

}  // namespace accel::detail
