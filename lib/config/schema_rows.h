// SPDX-License-Identifier: Apache-2.0
// Internal to lib/config: the schema's rows, split by section so each file stays readable.
// schema.cc assembles them in table order (top level, mpirun, dynamo, DeepSpeed, FSDP,
// Megatron-LM, parallelism, FP8, SageMaker).
#pragma once

#include <vector>

#include "lib/config/schema.h"

namespace accel::schema_rows {

std::vector<KeySpec> deepSpeedAndFsdp();        // schema_deepspeed_fsdp.cc
std::vector<KeySpec> megatronParallelismFp8();  // schema_parallel_fp8.cc
std::vector<KeySpec> sageMaker();               // schema_sagemaker.cc

}  // namespace accel::schema_rows
