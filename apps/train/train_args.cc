// SPDX-License-Identifier: Apache-2.0
#include "apps/train/train_args.h"

#include <climits>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "lib/common/strings.h"

namespace accel::train {

namespace {

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "accel-train: error: " << why << "\n(options: apps/train/train_args.h)\n";
  std::exit(2);
}

}  // namespace

Args parseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(arg + " needs a value");
      return argv[++i];
    };
    auto number = [&]() {
      std::string v = value();
      auto n = parseDouble(v);
      if (!n) usage(arg + ": '" + v + "' is not a number");
      return *n;
    };
    auto integer = [&](long long min) {  // whole numbers only: no silent truncation or wrap-around
      std::string v = value();
      auto n = parseInt(v);
      if (!n) usage(arg + ": '" + v + "' is not a whole number");
      if (*n < min) usage(fmt::format("{} must be at least {} (got {})", arg, min, *n));
      return *n;
    };
    if (arg == "--steps") a.steps = static_cast<long>(integer(0));
    else if (arg == "--batch_size") a.batch = static_cast<size_t>(integer(1));
    else if (arg == "--lr") a.lr = static_cast<float>(number());
    else if (arg == "--hidden") a.hidden = static_cast<int>(integer(1));
    else if (arg == "--seed") a.seed = static_cast<uint64_t>(integer(0));
    else if (arg == "--mixed_precision") a.mixed = value();
    else if (arg == "--gradient_accumulation_steps") a.accumulation = static_cast<int>(integer(0));
    else if (arg == "--checkpoint_every") a.checkpoint_every = static_cast<long>(integer(0));
    else if (arg == "--checkpoint_dir") a.checkpoint_dir = value();
    else if (arg == "--resume") a.resume = true;
    else if (arg == "--log_file") a.log_file = value();
    else if (arg == "--save_weights") a.save_weights = value();
    else if (arg == "--log_every") a.log_every = static_cast<long>(integer(0));
    else if (arg == "--profile") a.profile = true;
    else if (arg == "--benchmark_no_sync") a.benchmark_no_sync = true;
    else if (arg == "--first_bucket_mb") a.first_bucket_mb = number();
    else if (arg == "--bucket_mb") a.bucket_mb = number();
    else if (arg == "--grad_blocks") a.grad_blocks = static_cast<int>(integer(LLONG_MIN));
    else if (arg == "--cpu") a.cpu = true;
    else usage("unknown argument '" + arg + "'");
  }
  if (a.grad_blocks < 1 || a.grad_blocks > a.hidden) {
    usage(fmt::format("--grad_blocks {} must be between 1 and --hidden ({})", a.grad_blocks, a.hidden));
  }
  return a;
}


}  // namespace accel::train
