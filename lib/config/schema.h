// SPDX-License-Identifier: Apache-2.0
// THE table of configuration keys. The loader, the writer, validation, the wizard, `accel config
// show` and `accel launch` (its flags, their resolution and the worker variables) all read it:
// adding a key means adding one row in schema.cc (schema_deepspeed_fsdp.cc, schema_parallel_fp8.cc
// and schema_sagemaker.cc for the nested maps and SageMaker's keys).
// Keys and meanings are Accelerate's (default_config.yaml), so files move freely between tools.
#pragma once

#include <climits>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace accel {

enum class ValueType {
  Bool,    // true/false (YAML 1.1 words yes/no/on/off too, when unquoted)
  Int,     // integer within [min, max]
  Float,   // integer or decimal number
  String,  // any text; an unquoted number or boolean word is taken as its text
  Enum,    // one of `choices`
  List,    // sequence of scalars
  Map,     // nested map whose keys have their own rows ("fsdp_config.fsdp_version")
  Scalar,  // any scalar, typed as PyYAML would; strings restricted to `choices` when given
  Any,     // any value, kept as PyYAML types it (a SageMaker estimator's additional_args)
};

// When a key's worker variable is exported (Accelerate exports paradigm settings only under their
// paradigm, FP8 settings only with mixed_precision fp8, context/sequence-parallel options only when
// that size is above 1; its DeepSpeed launcher leaves out the dynamo settings).
enum class ExportWhen {
  Always,
  DeepSpeed,
  NotDeepSpeed,
  Fsdp,
  MegatronLm,
  Fp8,
  Parallelism,
  ContextParallel,
  SequenceParallel
};

// How the value is written: Python's str() (True/False for booleans), or str() lower/upper-cased.
enum class ExportCase { AsIs, Lower, Upper };

// Which of Accelerate's config classes has a top-level key: ClusterConfig (compute_environment
// LOCAL_MACHINE, the default), SageMakerConfig (AMAZON_SAGEMAKER), or both (BaseConfig's and
// the few both declare). Accelerate's loader refuses a key its class lacks.
enum class Section { Cluster, SageMaker, Both };

struct KeySpec {
  std::string_view path;  // "num_processes", or "fsdp_config.fsdp_version" for a nested key
  ValueType type = ValueType::String;
  // JSON text of the value a missing key takes (Accelerate's dataclass default); empty = none.
  std::string_view file_default = {};
  std::vector<std::string_view> choices = {};
  // The wizard's menu when it offers fewer than a file may hold (DeepSpeed's impi launcher).
  std::vector<std::string_view> menu_choices = {};
  std::string_view help = {};
  // The wizard's question, verbatim from Accelerate; "{}" stands for a device word.
  std::string_view prompt = {};
  // JSON text of the wizard's default when it differs from file_default.
  std::string_view wizard_default = {};
  long long min = LLONG_MIN;
  long long max = LLONG_MAX;
  bool fold_case = false;             // Enum: any case accepted, canonical spelling written
  std::string_view open_prefix = {};  // Map: unknown keys with this prefix are accepted as-is
  std::string_view add_prefix = {};   // Map: a key lacking this prefix gets it on load

  // ---- `accel launch` (lib/launch reads these; a row without a flag is a file-only key) ----
  std::string_view flag = {};            // the launch flag, Accelerate's spelling without "--"
  bool is_switch = false;                // the flag takes no value and means true (argparse store_true)
  bool placement = false;                // resolves flag > SLURM > config > default (else flag > config > default)
  std::string_view launch_default = {};  // JSON text of the value at launch when nothing sets it
  // The worker variable: "VAR" gets the value; "VAR=x" gets x when the value is true; a list
  // value spreads over "VAR1,VAR2,…". Empty: none (or the launcher's own code, e.g. gpu_ids).
  std::string_view exports = {};
  // Map with open_prefix: its keys without a row export as the key upper-cased
  // (megatron_lm_foo -> MEGATRON_LM_FOO), under this condition, as Accelerate's loop does.
  ExportWhen export_when = ExportWhen::Always;
  ExportCase export_case = ExportCase::AsIs;

  // ---- which files have the key, and what Accelerate's loader itself checks ----
  Section section = Section::Cluster;  // top-level rows; a nested key belongs to its map's class
  // Accelerate's loader turns the value into an enum: a value outside `choices` refuses the file.
  // Every other value it keeps as written (its dataclasses check no types).
  bool checked_on_load = false;
  std::vector<std::string_view> sagemaker_choices = {};  // `choices` in a SageMaker config
  std::string_view sagemaker_default = {};               // file_default in a SageMaker config
};

// Every key, top-level and nested, in table order.
const std::vector<KeySpec>& configSchema();

// The row for a dotted path, or nullptr.
const KeySpec* findKey(std::string_view path);

// The row for a dotted path; throws std::logic_error when it does not exist (a programming error).
const KeySpec& keySpec(std::string_view path);

// Names of the keys directly inside `map_path` ("" for the top level: those of a ClusterConfig,
// or of a SageMakerConfig when `sagemaker`), in table order.
std::vector<std::string> childKeys(std::string_view map_path, bool sagemaker = false);

// Whether a SageMakerConfig (`sagemaker`) or a ClusterConfig has this top-level row.
bool inSection(const KeySpec& spec, bool sagemaker);

// The parsed file_default (or wizard_default) of a row, in a ClusterConfig or a SageMakerConfig;
// null when it has none.
nlohmann::json fileDefault(const KeySpec& spec, bool sagemaker = false);
nlohmann::json wizardDefault(const KeySpec& spec);
nlohmann::json launchDefault(const KeySpec& spec);

// The choices of an Enum row in a ClusterConfig or a SageMakerConfig.
const std::vector<std::string_view>& choicesOf(const KeySpec& spec, bool sagemaker);

// "true or false", "an integer from 0 to 65535", "one of: no, fp16, bf16, fp8", …
std::string describeType(const KeySpec& spec, bool sagemaker = false);

}  // namespace accel
