// SPDX-License-Identifier: Apache-2.0
// Internal to the wizard: the state its question groups share (the groups: wizard.cc for the
// machine and processes, wizard_paradigms.h for the optional blocks).
#pragma once

#include <string>

#include "lib/config/asker.h"
#include "lib/config/config.h"

namespace accel::wizard {

struct WizardState {
  Asker& ask;
  Config config;            // values answered so far
  std::string type = "NO";  // distributed_type as it evolves (MULTI_GPU -> FSDP, …)
  long long num_machines = 1;
  int visible_gpus = 0;  // on this machine, for the process count's default
  bool use_cpu = false;
  bool dynamo = false;
  bool deepspeed_json = false;  // DeepSpeed configured by a JSON file: no precision question
};

// The schema's prompt for a key; "{}" replaced by `word` when given.
std::string promptFor(std::string_view key, std::string_view word = {});

}  // namespace accel::wizard
