// SPDX-License-Identifier: Apache-2.0
#include "apps/train/train_args.h"

#include <climits>

#include <fmt/format.h>

#include "apps/cli_parse.h"

namespace accel::train {

Args parseArgs(int argc, char** argv) {
  Args a;
  CLI::App app{"accel-train: the reference data-parallel trainer; run it under `accel launch`", "accel-train"};
  lastValueWins(app);
  auto option = [&](const char* name, auto& target, const char* help) {
    return app.add_option(flagSpellings(name), target, help)->capture_default_str();
  };
  auto flag = [&](const char* name, bool& target, const char* help) {
    app.add_flag(flagSpellings(name), target, help);
  };
  option("steps", a.steps, "optimizer steps")->check(wholeNumberAtLeast(0));
  option("batch_size", a.batch, "global batch, split over processes and accumulation steps")
      ->check(wholeNumberAtLeast(1));
  option("lr", a.lr, "learning rate (SGD with momentum 0.9)")->check(number());
  option("hidden", a.hidden, "hidden units")->check(wholeNumberAtLeast(1));
  option("seed", a.seed, "weights and data order")->check(wholeNumberAtLeast(0));
  // Checked where the launcher's ACCELERATE_MIXED_PRECISION is, so both get one message.
  option("mixed_precision", a.mixed, "no, fp16 or bf16 (default: ACCELERATE_MIXED_PRECISION from the launcher)");
  option("gradient_accumulation_steps", a.accumulation, "micro-batches per step (0: the launcher's setting)")
      ->check(wholeNumberAtLeast(0));
  option("checkpoint_every", a.checkpoint_every, "save every N steps (0: never)")->check(wholeNumberAtLeast(0));
  option("checkpoint_dir", a.checkpoint_dir, "where checkpoints go");
  flag("resume", a.resume, "continue from the latest checkpoint in --checkpoint_dir");
  option("log_file", a.log_file, "metrics as JSON lines, one per step");
  option("save_weights", a.save_weights, "the final fp32 weights, raw, to this file");
  option("log_every", a.log_every, "print the loss every N steps (0: never)")->check(wholeNumberAtLeast(0));
  flag("profile", a.profile, "per rank: step time and the share of the all-reduce hidden behind backward");
  flag("benchmark_no_sync", a.benchmark_no_sync,
       "never reduce gradients (ranks diverge): the baseline that prices the sync");
  option("first_bucket_mb", a.first_bucket_mb, "the first bucket's size (DDP's 1 MiB)")->check(number(true));
  option("bucket_mb", a.bucket_mb, "the other buckets' size (DDP's 25 MiB)")->check(number(true));
  option("grad_blocks", a.grad_blocks,
         "register W1's gradient as K row blocks (1 to --hidden), so it syncs while backward goes on")
      ->check(wholeNumberAtLeast(LLONG_MIN));  // the range is checked after parsing
  option("step_pause", a.step_pause, "each step lasts at least this many seconds (a demo's or a test's pace)")
      ->check(number());
  flag("cpu", a.cpu, "train on the CPU even when a CUDA device is visible (ACCELERATE_USE_CPU=True does too)");
  parseCommandLine(app, argc, argv);
  if (a.grad_blocks < 1 || a.grad_blocks > a.hidden) {
    exitWithUsageError(app,
                       fmt::format("--grad_blocks {} must be between 1 and --hidden ({})", a.grad_blocks, a.hidden));
  }
  return a;
}

}  // namespace accel::train
