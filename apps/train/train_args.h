// SPDX-License-Identifier: Apache-2.0
// accel-train's command line. Options: --steps N --batch_size B (global) --lr X --hidden H --seed S
// --mixed_precision no|fp16|bf16 --gradient_accumulation_steps A --checkpoint_every N
// --checkpoint_dir D --resume --log_file F --save_weights F --log_every N --profile
// --first_bucket_mb X --bucket_mb X
// --grad_blocks K (W1's gradient registered as K row blocks, so it syncs while backward goes on)
// --benchmark_no_sync (never reduce gradients: ranks diverge; the baseline that prices the sync)
// --cpu (train on the CPU even when a CUDA device is visible; ACCELERATE_USE_CPU=True does too)
// --step_pause S (each step lasts at least S seconds: time for a demo or a test to act between steps)
// Parsed with CLI11 (apps/cli_parse.h): --help lists them; a bad option exits 2 with its reason.
#pragma once

#include <cstdint>
#include <string>

namespace accel::train {

struct Args {
  long steps = 300, checkpoint_every = 0, log_every = 50;
  size_t batch = 48;
  float lr = 0.05f;
  int hidden = 64;
  uint64_t seed = 1;
  std::string mixed, checkpoint_dir, log_file, save_weights;
  int accumulation = 0;
  int grad_blocks = 1;
  bool resume = false;
  bool profile = false;
  bool benchmark_no_sync = false;
  bool cpu = false;
  double first_bucket_mb = 1, bucket_mb = 25;
  double step_pause = 0;
};

Args parseArgs(int argc, char** argv);

}  // namespace accel::train
