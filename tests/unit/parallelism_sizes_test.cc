// SPDX-License-Identifier: Apache-2.0
// Accelerate 1.15's ParallelismConfig size rule (lib/config/parallelism_sizes.h), case by case as
// ParallelismConfig._validate_accelerator decides it.
#include <catch2/catch.hpp>

#include "lib/config/parallelism_sizes.h"

using accel::ParallelismSize;
using accel::parallelismSizeProblem;

namespace {

std::vector<ParallelismSize> sizes(long long dp_replicate, long long dp_shard, long long tp, long long cp,
                                   long long sp) {
  return {{"dp_replicate_size", dp_replicate, "default"},
          {"dp_shard_size", dp_shard, "command line"},
          {"tp_size", tp, "config file, line 9"},
          {"cp_size", cp, "default"},
          {"sp_size", sp, "default"}};
}

}  // namespace

TEST_CASE("parallelism sizes: a product equal to the world, or 1, is what Accelerate accepts", "[parallelism]") {
  CHECK_FALSE(parallelismSizeProblem(sizes(1, 4, 2, 1, 1), "deepspeed", 8));
  CHECK_FALSE(parallelismSizeProblem(sizes(2, 2, 1, 2, 1), "deepspeed", 8));
  CHECK_FALSE(parallelismSizeProblem(sizes(1, 1, 1, 1, 1), "deepspeed", 8));  // dp_replicate becomes 8
  CHECK_FALSE(parallelismSizeProblem(sizes(1, 1, 1, 1, 1), "deepspeed", 1));
}

TEST_CASE("parallelism sizes: DeepSpeed's sequence parallelism forms its own groups", "[parallelism]") {
  CHECK_FALSE(parallelismSizeProblem(sizes(1, 2, 1, 1, 4), "deepspeed", 2));
  CHECK(parallelismSizeProblem(sizes(1, 2, 1, 1, 4), "other", 2));
  CHECK(parallelismSizeProblem(sizes(1, 3, 1, 1, 1), "deepspeed", 2));  // sp 1: the rule holds
}

TEST_CASE("parallelism sizes: a mismatch names every size, the product, the world and what to change",
          "[parallelism]") {
  auto p = parallelismSizeProblem(sizes(1, 2, 2, 1, 1), "deepspeed", 8);
  REQUIRE(p);
  CHECK(p->message ==
        "the ParallelismConfig sizes multiply to 4, but the world size is 8: dp_replicate_size 1 (default) × "
        "dp_shard_size 2 (command line) × tp_size 2 (config file, line 9) × cp_size 1 (default) × sp_size 1 "
        "(default); every worker would fail building its Accelerator (\"total_size (4) does not match "
        "num_processes\", or torch's \"Mesh should not be bigger than default world size\")");
  CHECK(p->hint ==
        "set dp_shard_size to 4 (--parallelism_config_dp_shard_size) so that the product is 8, or launch "
        "4 processes");
  // No data-parallel size fits (tp 4 does not divide 2): tp itself then.
  auto tp = parallelismSizeProblem(sizes(1, 1, 4, 1, 1), "deepspeed", 2);
  REQUIRE(tp);
  CHECK(tp->hint == "set tp_size to 2 (--parallelism_config_tp_size) so that the product is 2, or launch 4 processes");
  // No single size fits: the sizes as a whole.
  auto q = parallelismSizeProblem(sizes(1, 1, 3, 3, 1), "deepspeed", 8);
  REQUIRE(q);
  CHECK(q->hint == "change the sizes so that the product is 8, or launch 9 processes");
}
