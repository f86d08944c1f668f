// SPDX-License-Identifier: Apache-2.0
// The paradigm of a launch: Accelerate's distributed_type and whether its workers are told to run
// on the CPU, decided as `accelerate launch` 1.15 decides them (commands/launch.py
// launch_command): a paradigm flag, else the config file's distributed_type (not with --cpu),
// else the machine. Accelerate picks its launcher from the paradigm alone: DEEPSPEED goes to
// DeepSpeed's, MULTI_GPU/FSDP/MEGATRON_LM to torchrun's, with or without GPUs and whatever the
// file's use_cpu says; only its simple launcher (NO, MULTI_CPU, --cpu) reads use_cpu and exports
// ACCELERATE_USE_CPU. accel follows that exactly and never refuses where Accelerate launches; what
// the user may not expect (no GPU visible, --cpu or use_cpu meaning nothing for the paradigm) is
// said in one note each, never changed silently.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/config/config.h"
#include "lib/launch/facts/facts.h"
#include "lib/launch/settings/launch_options.h"
#include "lib/launch/settings/launch_settings.h"

namespace accel::launch::settings {

// Refuses paradigm flags Accelerate refuses together, and TPU launches (UsageError).
void checkParadigmFlags(const LaunchOptions& o);

// The paradigm; the notes it owes the user are appended to `notes`.
Paradigm resolveParadigm(const LaunchOptions& o, const std::optional<Config>& config, const facts::Machine& f,
                         std::vector<std::string>& notes);

}  // namespace accel::launch::settings
