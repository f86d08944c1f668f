// SPDX-License-Identifier: Apache-2.0
// The keys only a SageMaker config has (Accelerate's SageMakerConfig, compute_environment
// AMAZON_SAGEMAKER), with its defaults. accel reads and shows such a file as Accelerate does;
// `accel launch` refuses it (Accelerate starts those jobs through SageMaker's API). None has a
// flag: Accelerate's SageMaker launch reads them from the file.
#include "lib/config/schema_rows.h"

namespace accel::schema_rows {

namespace {
using T = ValueType;
constexpr Section S = Section::SageMaker;
}  // namespace

std::vector<KeySpec> sageMaker() {
  // A table: one key per entry, its fields grouped by role (kept by hand).
  // clang-format off
  return {
      {.path = "ec2_instance_type", .type = T::String, .help = "SageMaker: the instance type (required)", .section = S},
      {.path = "iam_role_name", .type = T::String, .help = "SageMaker: the IAM role the job runs as (required)", .section = S},
      {.path = "image_uri", .type = T::String, .help = "SageMaker: a custom training image", .section = S},
      {.path = "profile", .type = T::String, .help = "SageMaker: the AWS profile", .section = S},
      {.path = "region", .type = T::String, .file_default = R"("us-east-1")", .help = "SageMaker: the AWS region",
       .section = S},
      {.path = "base_job_name", .type = T::String, .file_default = R"("accelerate-sagemaker-1")",
       .help = "SageMaker: the job name's prefix", .section = S},
      {.path = "pytorch_version", .type = T::String, .file_default = R"("1.10.2")", .help = "SageMaker: PyTorch in the image",
       .section = S},
      {.path = "transformers_version", .type = T::String, .file_default = R"("4.17.0")",
       .help = "SageMaker: Transformers in the image", .section = S},
      {.path = "py_version", .type = T::String, .file_default = R"("py38")", .help = "SageMaker: Python in the image",
       .section = S},
      {.path = "sagemaker_inputs_file", .type = T::String, .help = "SageMaker: a TSV of input channels", .section = S},
      {.path = "sagemaker_metrics_file", .type = T::String, .help = "SageMaker: a TSV of metric definitions",
       .section = S},
      {.path = "additional_args", .type = T::Any, .help = "SageMaker: more estimator arguments", .section = S},
  };
  // clang-format on
}

}  // namespace accel::schema_rows
