// SPDX-License-Identifier: Apache-2.0
// Files Accelerate loads, loaded the same way, and files no real config is:
// a SageMaker config is read and shown, and refused only by a launch; the tuple text of
// fp8_config.override_linear_precision that Accelerate's examples use is read, and launched as
// the three booleans it spells; a file larger than any config, or a directory, is refused at
// once with what it is; a .json config's syntax is Python's json.load's. The real binary.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <string>

#include "tests/support/process.h"

using namespace accel::test;

namespace {

const std::string kSageMaker =
    "compute_environment: AMAZON_SAGEMAKER\n"
    "distributed_type: DATA_PARALLEL\n"
    "ec2_instance_type: ml.p3.16xlarge\n"
    "iam_role_name: accelerate_sagemaker_execution_role\n"
    "mixed_precision: fp16\n"
    "region: eu-west-1\n";

RunResult runAccel(const TempDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), accelBinary());
  return run(args, {}, hermeticEnv(dir), 30000);
}

}  // namespace

TEST_CASE("config files: a SageMaker config is read and shown, and refused only by a launch", "[config][compat]") {
  TempDir dir;
  const std::string path = dir.write("sagemaker.yaml", kSageMaker);
  auto shown = runAccel(dir, {"config", "show", "--config_file", path});
  INFO(shown.out << shown.err);
  CHECK(shown.exit_code == 0);
  CHECK(contains(shown.out, "ec2_instance_type       ml.p3.16xlarge"));
  CHECK(contains(shown.out, "region                  eu-west-1                            file, line 6"));
  CHECK(contains(shown.out, "pytorch_version         1.10.2                               default"));  // Accelerate's
  CHECK_FALSE(contains(shown.out, "num_processes"));  // a ClusterConfig key
  CHECK(runAccel(dir, {"config", "validate", path}).exit_code == 0);
  auto launched = runAccel(dir, {"launch", "--config_file", path, "--no_python", "true"});
  CHECK(launched.exit_code == 2);
  CHECK(contains(launched.err,
                 "sagemaker.yaml:1:1: compute_environment AMAZON_SAGEMAKER: accel does not launch SageMaker jobs"));
  CHECK(contains(launched.err, "launch it with `accelerate launch`"));
  // What Accelerate's loader refuses in a SageMaker file, accel refuses.
  auto cluster_key =
      runAccel(dir, {"config", "show", "--config_file", dir.write("k.yaml", kSageMaker + "num_processes: 8\n")});
  CHECK(cluster_key.exit_code == 2);
  CHECK(contains(cluster_key.err, "k.yaml:7:1: unknown key 'num_processes' in a SageMaker config"));
  auto no_role = runAccel(dir, {"config", "show", "--config_file",
                                dir.write("r.yaml",
                                          "compute_environment: AMAZON_SAGEMAKER\ndistributed_type: DATA_PARALLEL\n"
                                          "ec2_instance_type: ml.p3.2xlarge\n")});
  CHECK(no_role.exit_code == 2);
  CHECK(contains(no_role.err, "a SageMaker config (compute_environment AMAZON_SAGEMAKER) needs iam_role_name"));
  // Accelerate's own test file 0_30_0_sagemaker.yaml: `distributed_type: NO` unquoted is YAML's
  // false, which SageMakerConfig keeps; the quoted 'NO' is text, which Accelerate refuses.
  const std::string sagemaker_no =
      "compute_environment: AMAZON_SAGEMAKER\nec2_instance_type: MY_TYPE\niam_role_name: MY_ROLE\ndistributed_type: ";
  auto plain_no = runAccel(dir, {"config", "show", "--config_file", dir.write("n.yaml", sagemaker_no + "NO\n")});
  CHECK(plain_no.exit_code == 0);
  CHECK(contains(plain_no.out, "distributed_type        false"));
  auto quoted_no = runAccel(dir, {"config", "show", "--config_file", dir.write("q.yaml", sagemaker_no + "'NO'\n")});
  CHECK(quoted_no.exit_code == 2);
  CHECK(contains(quoted_no.err, "q.yaml:4:1: Accelerate 1.15 refuses a SageMaker config with distributed_type NO"));
}

TEST_CASE("config files: fp8 override_linear_precision as tuple text is read and launched as its booleans",
          "[config][compat]") {
  TempDir dir;
  const std::string path =
      dir.write("fp8.yaml",
                "distributed_type: MULTI_GPU\nnum_processes: 2\nmixed_precision: fp8\nfp8_config:\n"
                "  backend: TE\n  override_linear_precision: (false, true, false)\n");
  auto shown = runAccel(dir, {"config", "show", "--config_file", path});
  CHECK(shown.exit_code == 0);
  CHECK(contains(shown.out, "fp8_config.override_linear_precision  (false, true, false)"));
  auto dry = runAccel(dir, {"launch", "--dry_run", "--cpu", "--config_file", path, "--no_python", "true"});
  INFO(dry.out << dry.err);
  CHECK(dry.exit_code == 0);
  CHECK(contains(dry.out, "ACCELERATE_FP8_OVERRIDE_FPROP=False"));
  CHECK(contains(dry.out, "ACCELERATE_FP8_OVERRIDE_DGRAD=True"));
  CHECK(contains(dry.out, "ACCELERATE_FP8_OVERRIDE_WGRAD=False"));
}

TEST_CASE("config files: a file larger than any config is refused at once, a directory for what it is",
          "[config][errors]") {
  TempDir dir;
  std::string big;
  for (int i = 0; big.size() < 3 * 1000 * 1000; ++i) big += "key" + std::to_string(i) + ": " + std::to_string(i) + "\n";
  const std::string path = dir.write("big.yaml", big);
  const auto start = std::chrono::steady_clock::now();
  auto r = runAccel(dir, {"config", "validate", path});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(r.exit_code == 2);
  CHECK(
      contains(r.err, "big.yaml: the file is 3.0 MB; accel reads config files up to 1.0 MB (real ones are a few KB)"));
  CHECK(took < (std::getenv("ACCEL_TEST_QUICK") ? 3.0 : 1.0));
  auto d = runAccel(dir, {"config", "validate", dir.path()});
  CHECK(d.exit_code == 2);
  CHECK(contains(d.err, dir.path() + ": is a directory, not a config file"));
  // Just under the limit, all of it unknown keys: bounded time, and the listing is capped.
  const std::string most = dir.write("most.yaml", "distributed_type: 'NO'\n" + big.substr(0, 900 * 1000));
  auto m = runAccel(dir, {"config", "validate", most});
  CHECK(m.exit_code == 2);
  CHECK(contains(m.err, "more problem(s) not listed"));
  CHECK(m.err.size() < 10000);
}

TEST_CASE("config files: .json syntax is Python json.load's", "[config][errors]") {
  TempDir dir;
  auto comma = runAccel(dir, {"config", "validate", dir.write("c.json", "{\n  \"distributed_type\": \"NO\",\n}\n")});
  CHECK(comma.exit_code == 2);
  CHECK(contains(comma.err, "c.json:3:1: invalid JSON: expecting a key in double quotes"));
  CHECK(contains(comma.err, "remove the comma before '}'"));
  std::string deep = "{\"distributed_type\": \"NO\", \"fsdp_config\": {\"fsdp_x\": " + std::string(2000, '[') +
                     std::string(2000, ']') + "}}";
  auto nested = runAccel(dir, {"config", "validate", dir.write("d.json", deep)});
  CHECK(nested.exit_code == 2);
  CHECK(contains(nested.err, "invalid JSON: nested deeper than 500 levels"));
}
