// SPDX-License-Identifier: Apache-2.0
// Internal to the wizard: its optional blocks, one question group each: dynamo, DeepSpeed, FSDP
// (+ parallelism config), Megatron-LM and FP8. Order, defaults and written keys follow
// Accelerate 1.15's accelerate/commands/config/cluster.py, whose questions come in this order.
#pragma once

#include "lib/config/wizard_steps.h"

namespace accel::wizard {

void askDynamo(WizardState& s);
void askDeepSpeed(WizardState& s);
void askFsdp(WizardState& s);
void askMegatron(WizardState& s);
void askFp8(WizardState& s);

}  // namespace accel::wizard
