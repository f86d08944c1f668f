#!/usr/bin/env python3
"""PyYAML compatibility checks for accel's config files.

Accelerate reads and writes its config with PyYAML (``yaml.safe_load`` /
``yaml.safe_dump`` with the defaults: sorted keys, block style), or with
``json`` for ``*.json`` files and for ``accelerate config default``.  These
checks make sure accel agrees with it in both directions:

  a) every golden file and template is exactly what ``yaml.safe_dump`` writes
     for its own content, and the string-valued keys load as ``str``;
  b) files written by PyYAML the way Accelerate's wizard / ``config update``
     writes them are accepted by ``accel config validate`` and survive
     ``accel config update`` with every key, value and Python type intact
     (apart from the documented legacy conversions and fp8 key renames), and
     a second update changes nothing;
  c) files that PyYAML itself misreads (bare ``NO`` / ``no``) are accepted by
     accel and rewritten so that PyYAML reads the intended strings.

Usage:
  python3 tests/compat/pyyaml_compat.py --accel build/bin/accel \\
      --golden tests/golden --templates config-templates

Only the standard library and PyYAML (python3-yaml) are used.  Prints one
``ok: ...`` / ``FAIL: ...`` line per check and ends with ``N passed, M failed``;
the exit status is 1 when anything failed.
"""

import argparse
import copy
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import yaml

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Renames accel applies inside fp8_config: the wizard's names -> the names
# Accelerate's launcher and FP8 plugin actually read (Accelerate 1.15's wizard asks for
# amax_history_length, amax_compute_algorithm and optimization_level, but FP8RecipeKwargs
# reads amax_history_len, amax_compute_algo and opt_level).
FP8_RENAMES = {
    "amax_history_length": "amax_history_len",
    "amax_compute_algorithm": "amax_compute_algo",
    "optimization_level": "opt_level",
}


class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def ok(self, name):
        self.passed += 1
        print("ok: " + name, flush=True)

    def fail(self, name, detail=""):
        self.failed += 1
        line = "FAIL: " + name
        if detail:
            detail = str(detail).rstrip("\n")
            line += ": " + detail.replace("\n", "\n    ")
        print(line, flush=True)

    def check(self, cond, name, detail=""):
        if cond:
            self.ok(name)
        else:
            self.fail(name, detail)
        return cond


# --------------------------------------------------------------------------
# helpers


def read_text(path):
    with open(path, "r", encoding="utf-8", newline="") as f:
        return f.read()


def write_text(path, text):
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def short_diff(expected, actual, a="expected", b="actual", limit=30):
    lines = list(
        difflib.unified_diff(
            expected.splitlines(True), actual.splitlines(True), a, b, n=1
        )
    )
    if len(lines) > limit:
        lines = lines[:limit] + ["... (%d more diff lines)\n" % (len(lines) - limit)]
    return "".join(lines)


def run_accel(accel, args, timeout=60):
    """Run accel; return (rc, combined output)."""
    try:
        p = subprocess.run(
            [accel] + list(args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return 124, "timed out after %ss" % timeout
    except OSError as e:
        return 127, "could not run %s: %s" % (accel, e)
    out = p.stdout.decode("utf-8", "replace") + p.stderr.decode("utf-8", "replace")
    return p.returncode, out


def validate_ok(accel, path):
    """`accel config validate PATH` must exit 0 and print `PATH: ok`."""
    rc, out = run_accel(accel, ["config", "validate", path])
    good = rc == 0 and (path + ": ok") in out.splitlines()
    return good, "rc=%d\n%s" % (rc, out)


def is_json_text(text):
    return text.lstrip().startswith("{")


def canonical_yaml(data):
    # PyYAML defaults == what Accelerate's to_yaml_file writes.
    return yaml.safe_dump(data)


def canonical_json(data):
    # What Accelerate's to_json_file / write_basic_config write.
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def type_name(v):
    return type(v).__name__


def compare_preserved(expected, actual, path=""):
    """Every key/value of `expected` must be in `actual` with the same Python
    type and value (recursively for maps; lists compared element-wise).
    `actual` may have extra keys.  Returns a list of problems."""
    problems = []
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return ["%s: expected a map, got %s %r" % (path or "<top>", type_name(actual), actual)]
        for k, v in expected.items():
            p = "%s.%s" % (path, k) if path else str(k)
            if k not in actual:
                problems.append("%s: missing (expected %s %r)" % (p, type_name(v), v))
            else:
                problems.extend(compare_preserved(v, actual[k], p))
        return problems
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return ["%s: expected a list, got %s %r" % (path, type_name(actual), actual)]
        if len(expected) != len(actual):
            return ["%s: expected %r, got %r" % (path, expected, actual)]
        for i, (e, a) in enumerate(zip(expected, actual)):
            problems.extend(compare_preserved(e, a, "%s[%d]" % (path, i)))
        return problems
    if type(expected) is not type(actual) or expected != actual:
        problems.append(
            "%s: expected %s %r, got %s %r"
            % (path, type_name(expected), expected, type_name(actual), actual)
        )
    return problems


# --------------------------------------------------------------------------
# a) existing files must be exactly what PyYAML writes


def check_existing_files(res, accel, label, directory, tmp):
    if not directory:
        print("note: no --%s directory given, skipping" % label, flush=True)
        return
    if not os.path.isdir(directory):
        res.fail("%s: directory %s exists" % (label, directory))
        return
    files = sorted(
        f for f in os.listdir(directory)
        if f.endswith(".yaml") and os.path.isfile(os.path.join(directory, f))
    )
    if not files:
        print("note: no *.yaml files in %s (%s), nothing to check" % (directory, label), flush=True)
        return
    for fname in files:
        path = os.path.join(directory, fname)
        tag = "%s/%s" % (label, fname)
        text = read_text(path)
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            res.fail(tag + ": yaml.safe_load", e)
            continue
        if not res.check(isinstance(data, dict), tag + ": loads as a map",
                         "got %s" % type_name(data)):
            continue

        if is_json_text(text):
            # `accelerate config default` writes JSON even into a .yaml name.
            want = canonical_json(data)
            res.check(want == text, tag + ": JSON content is byte-identical to json.dumps(indent=2, sort_keys=True)",
                      short_diff(want, text, "json.dumps", fname))
        else:
            want = canonical_yaml(data)
            res.check(want == text, tag + ": byte-identical to yaml.safe_dump(yaml.safe_load(file))",
                      short_diff(want, text, "yaml.safe_dump", fname))

        for key in ("distributed_type", "mixed_precision"):
            if key in data:
                v = data[key]
                res.check(isinstance(v, str), "%s: %s loads as str" % (tag, key),
                          "PyYAML loads %s %r" % (type_name(v), v))
        if "gpu_ids" in data:
            v = data["gpu_ids"]
            res.check(isinstance(v, str), tag + ": gpu_ids loads as str",
                      "PyYAML loads %s %r (a bare int breaks Accelerate's gpu_ids.split)" % (type_name(v), v))

        # accel must accept it, and (for YAML content) leave it untouched.
        good, detail = validate_ok(accel, path)
        res.check(good, tag + ": accel config validate prints ok and exits 0", detail)
        if not is_json_text(text):
            copy_path = os.path.join(tmp, "%s__%s" % (label, fname))
            shutil.copyfile(path, copy_path)
            rc, out = run_accel(accel, ["config", "update", "--config_file", copy_path])
            if res.check(rc == 0, tag + ": accel config update exits 0", "rc=%d\n%s" % (rc, out)):
                after = read_text(copy_path)
                res.check(after == text, tag + ": accel config update leaves it byte-identical",
                          short_diff(text, after, fname, "after update"))


# --------------------------------------------------------------------------
# b) files written by PyYAML / json the way Accelerate writes them

WIZARD_BASE = {
    "compute_environment": "LOCAL_MACHINE",
    "debug": False,
    "downcast_bf16": "no",
    "enable_cpu_affinity": False,
    "machine_rank": 0,
    "main_training_function": "main",
    "num_machines": 1,
    "rdzv_backend": "static",
    "same_network": True,
    "tpu_env": [],
    "tpu_use_cluster": False,
    "tpu_use_sudo": False,
    "use_cpu": False,
}


def wizard(**kw):
    d = copy.deepcopy(WIZARD_BASE)
    d.update(kw)
    return d


def build_cases():
    """(name, data, fmt, legacy).  fmt: 'yaml' (safe_dump into .yaml),
    'json_as_yaml' (json.dumps into .yaml, like `accelerate config default`),
    'json' (json.dumps into .json)."""
    cases = []

    # A wizard session: no distributed training, Enter everywhere.
    cases.append(("no_distributed", wizard(
        distributed_type="NO", gpu_ids="all", mixed_precision="no", num_processes=1), "yaml", False))

    # A wizard session: CPU only.
    cases.append(("no_distributed_cpu_only", wizard(
        distributed_type="NO", mixed_precision="no", num_processes=1, use_cpu=True), "yaml", False))

    # A wizard session: multi-GPU, 4 GPUs, fp16; specific GPU ids.
    cases.append(("multi_gpu_fp16", wizard(
        distributed_type="MULTI_GPU", gpu_ids="0,1,2,3", mixed_precision="fp16", num_processes=4,
        enable_cpu_affinity=True), "yaml", False))

    # A wizard session: multi-CPU with mpirun.
    cases.append(("multi_cpu_mpirun", wizard(
        distributed_type="MULTI_CPU", mixed_precision="no", num_processes=4, use_cpu=True,
        mpirun_config={"mpirun_hostfile": "/home/user/hostfile"}), "yaml", False))

    # A wizard session: two machines of 8 GPUs, bf16, rank 0.
    cases.append(("two_machines_bf16", wizard(
        distributed_type="MULTI_GPU", gpu_ids="all", mixed_precision="bf16", num_processes=16,
        num_machines=2, main_process_ip="10.0.0.1", main_process_port=29500), "yaml", False))

    # Two machines, not on the same network, c10d rendezvous, rank 1, a host
    # name instead of an IP and port 0 ("pick a free port").
    cases.append(("two_machines_c10d_rank1", wizard(
        distributed_type="MULTI_GPU", gpu_ids="all", mixed_precision="bf16", num_processes=16,
        num_machines=2, machine_rank=1, main_process_ip="node-0.cluster.local", main_process_port=0,
        rdzv_backend="c10d", same_network=False), "yaml", False))

    # A single GPU id must stay a quoted string ('1'), never an int (Accelerate reads a string).
    cases.append(("no_distributed_single_gpu_id", wizard(
        distributed_type="NO", gpu_ids="1", mixed_precision="bf16", num_processes=1), "yaml", False))

    # A wizard session: DeepSpeed ZeRO-3, CPU offload, clipping 1.0, 16-bit save, zero.Init.
    cases.append(("deepspeed_zero3", wizard(
        distributed_type="DEEPSPEED", mixed_precision="bf16", num_processes=4,
        deepspeed_config={
            "gradient_accumulation_steps": 1,
            "gradient_clipping": 1.0,
            "offload_optimizer_device": "cpu",
            "offload_param_device": "cpu",
            "zero3_init_flag": True,
            "zero3_save_16bit_model": True,
            "zero_stage": 3,
        }), "yaml", False))

    # A wizard session: multi-node DeepSpeed with pdsh, NVMe offload, MoE.
    cases.append(("deepspeed_multinode_pdsh", wizard(
        distributed_type="DEEPSPEED", mixed_precision="bf16", num_processes=16, num_machines=2,
        main_process_ip="10.0.0.1", main_process_port=29500,
        deepspeed_config={
            "deepspeed_exclusion_filter": "worker-1:0",
            "deepspeed_hostfile": "/home/user/hostfile",
            "deepspeed_inclusion_filter": "worker-0@worker-1:0,2",
            "deepspeed_moe_layer_cls_names": "MixtralSparseMoeBlock",
            "deepspeed_multinode_launcher": "pdsh",
            "gradient_accumulation_steps": 8,
            "gradient_clipping": 0.5,
            "offload_optimizer_device": "nvme",
            "offload_optimizer_nvme_path": "/nvme",
            "offload_param_device": "nvme",
            "offload_param_nvme_path": "/nvme",
            "zero3_init_flag": True,
            "zero3_save_16bit_model": False,
            "zero_stage": 3,
        }), "yaml", False))

    # A wizard session: DeepSpeed with a JSON file: no mixed_precision key at all.
    cases.append(("deepspeed_json_file", wizard(
        distributed_type="DEEPSPEED", num_processes=4,
        deepspeed_config={
            "deepspeed_config_file": "/home/user/ds_config.json",
            "zero3_init_flag": False,
        }), "yaml", False))

    # A wizard session: FSDP version 1.
    cases.append(("fsdp_v1", wizard(
        distributed_type="FSDP", mixed_precision="bf16", num_processes=4,
        fsdp_config={
            "fsdp_activation_checkpointing": False,
            "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
            "fsdp_backward_prefetch": "BACKWARD_PRE",
            "fsdp_cpu_ram_efficient_loading": True,
            "fsdp_forward_prefetch": False,
            "fsdp_offload_params": False,
            "fsdp_reshard_after_forward": "FULL_SHARD",
            "fsdp_state_dict_type": "FULL_STATE_DICT",
            "fsdp_sync_module_states": True,
            "fsdp_transformer_layer_cls_to_wrap": "BertLayer",
            "fsdp_use_orig_params": True,
            "fsdp_version": 1,
        }), "yaml", False))

    # A wizard session: FSDP version 2 with size-based wrapping.
    cases.append(("fsdp_v2", wizard(
        distributed_type="FSDP", mixed_precision="bf16", num_processes=4,
        fsdp_config={
            "fsdp_activation_checkpointing": True,
            "fsdp_auto_wrap_policy": "SIZE_BASED_WRAP",
            "fsdp_cpu_ram_efficient_loading": True,
            "fsdp_min_num_params": 100000000,
            "fsdp_offload_params": True,
            "fsdp_reshard_after_forward": True,
            "fsdp_state_dict_type": "SHARDED_STATE_DICT",
            "fsdp_version": 2,
        }), "yaml", False))

    # A wizard session: FSDP2 plus parallelism_config.
    cases.append(("fsdp_v2_parallelism_config", wizard(
        distributed_type="FSDP", mixed_precision="bf16", num_processes=8,
        fsdp_config={
            "fsdp_activation_checkpointing": False,
            "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
            "fsdp_cpu_ram_efficient_loading": True,
            "fsdp_offload_params": False,
            "fsdp_reshard_after_forward": True,
            "fsdp_state_dict_type": "SHARDED_STATE_DICT",
            "fsdp_transformer_layer_cls_to_wrap": "LlamaDecoderLayer",
            "fsdp_version": 2,
        },
        parallelism_config={
            "parallelism_config_cp_comm_strategy": "alltoall",
            "parallelism_config_cp_size": 2,
            "parallelism_config_dp_replicate_size": 1,
            "parallelism_config_dp_shard_size": 2,
            "parallelism_config_tp_size": 2,
        }), "yaml", False))

    # A wizard session: dynamo with all five keys.
    cases.append(("dynamo_config", wizard(
        distributed_type="MULTI_GPU", gpu_ids="all", mixed_precision="no", num_processes=2,
        dynamo_config={
            "dynamo_backend": "INDUCTOR",
            "dynamo_mode": "max-autotune",
            "dynamo_use_dynamic": True,
            "dynamo_use_fullgraph": False,
            "dynamo_use_regional_compilation": True,
        }), "yaml", False))

    # A wizard session: fp8 with Transformer Engine, as the wizard writes it.
    cases.append(("fp8_te", wizard(
        distributed_type="MULTI_GPU", gpu_ids="all", mixed_precision="fp8", num_processes=2,
        fp8_config={
            "amax_compute_algorithm": "max",
            "amax_history_length": 1024,
            "backend": "TE",
            "fp8_format": "HYBRID",
            "interval": 1,
            "margin": 0,
            "override_linear_precision": [False, True, False],
            "use_autocast_during_eval": False,
        }), "yaml", False))

    # A wizard session: fp8 with MS-AMP (optimization_level -> opt_level).
    cases.append(("fp8_msamp", wizard(
        distributed_type="MULTI_GPU", gpu_ids="all", mixed_precision="fp8", num_processes=2,
        fp8_config={"backend": "MSAMP", "optimization_level": "O2"}), "yaml", False))

    # A wizard session: fp8 with torchao.
    cases.append(("fp8_ao", wizard(
        distributed_type="MULTI_GPU", gpu_ids="all", mixed_precision="fp8", num_processes=2,
        fp8_config={"backend": "AO", "enable_fsdp_float8_all_gather": True, "pad_inner_dim": True}),
        "yaml", False))

    # A wizard session: Megatron-LM.
    cases.append(("megatron_lm", wizard(
        distributed_type="MEGATRON_LM", mixed_precision="bf16", num_processes=8,
        megatron_lm_config={
            "megatron_lm_gradient_clipping": 1.0,
            "megatron_lm_num_micro_batches": 2,
            "megatron_lm_pp_degree": 2,
            "megatron_lm_recompute_activations": True,
            "megatron_lm_sequence_parallelism": True,
            "megatron_lm_tp_degree": 2,
            "megatron_lm_use_distributed_optimizer": True,
        }), "yaml", False))

    # A wizard session: TPU cluster.  tpu_use_sudo is stored as the raw answer string
    # by the wizard (no converter), so 'yes' must survive as a str.
    cases.append(("xla_tpu_cluster", wizard(
        distributed_type="XLA", mixed_precision="no", num_processes=8,
        main_training_function="train_fn", tpu_use_cluster=True, tpu_use_sudo="yes",
        tpu_name="my-tpu", tpu_zone="us-central1-a",
        commands=["pip install accelerate", "echo done"],
        tpu_vm=["tpu-vm-0", "tpu-vm-1"], tpu_env=["FOO=1", "BAR=2"]), "yaml", False))

    # A wizard session: mpirun hostfile under a home directory with a non-ASCII name
    # (PyYAML escapes it as "\xE9").
    cases.append(("multi_cpu_mpirun_non_ascii_path", wizard(
        distributed_type="MULTI_CPU", mixed_precision="no", num_processes=4, use_cpu=True,
        mpirun_config={"mpirun_hostfile": "/home/jos\u00e9/hostfile"}), "yaml", False))

    # Long plain strings: PyYAML's emitter folds plain scalars at spaces once
    # a line passes 80 columns (best_width), e.g. a TPU startup command or a
    # layer-class list written with ", ".
    cases.append(("long_strings_folded_by_pyyaml", wizard(
        distributed_type="XLA", mixed_precision="no", num_processes=8,
        tpu_use_cluster=True, tpu_name="my-tpu", tpu_zone="us-central1-a",
        commands=["pip install accelerate transformers datasets evaluate && "
                  "git clone https://github.com/huggingface/accelerate && cd accelerate"]), "yaml", False))
    cases.append(("long_layer_list_folded_by_pyyaml", wizard(
        distributed_type="FSDP", mixed_precision="bf16", num_processes=4,
        fsdp_config={
            "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
            "fsdp_transformer_layer_cls_to_wrap":
                "BertLayer, BertEmbeddings, BertSelfOutput, BertIntermediate, BertOutput, BertPooler",
            "fsdp_version": 2,
        }), "yaml", False))

    # An old file: legacy fp16 + top-level dynamo_backend (what `accelerate config update` converts).
    cases.append(("legacy_fp16_dynamo_backend", {
        "compute_environment": "LOCAL_MACHINE",
        "distributed_type": "MULTI_GPU",
        "dynamo_backend": "INDUCTOR",
        "fp16": True,
        "machine_rank": 0,
        "main_training_function": "main",
        "num_machines": 1,
        "num_processes": 2,
        "use_cpu": False,
    }, "yaml", True))

    # Legacy with dynamo_backend 'NO': becomes an empty dynamo_config (dropped).
    cases.append(("legacy_fp16_dynamo_backend_NO", {
        "compute_environment": "LOCAL_MACHINE",
        "distributed_type": "MULTI_GPU",
        "dynamo_backend": "NO",
        "fp16": True,
        "num_processes": 2,
    }, "yaml", True))

    # `accelerate config default` writes JSON even into a .yaml name.
    default_json = {
        "compute_environment": "LOCAL_MACHINE",
        "debug": False,
        "distributed_type": "MULTI_GPU",
        "downcast_bf16": False,
        "enable_cpu_affinity": False,
        "machine_rank": 0,
        "main_training_function": "main",
        "mixed_precision": "no",
        "num_machines": 1,
        "num_processes": 4,
        "rdzv_backend": "static",
        "same_network": False,
        "tpu_use_cluster": False,
        "tpu_use_sudo": False,
        "use_cpu": False,
    }
    cases.append(("config_default_json_in_yaml_name", default_json, "json_as_yaml", False))
    # The same content under a .json name is read and written as JSON.
    cases.append(("config_default_json_file", copy.deepcopy(default_json), "json", False))
    # A .json config whose float Python's json module writes with an exponent
    # and no dot (repr(1e-05) == '1e-05'): a JSON number, not a string.
    cases.append(("json_file_exponent_float", wizard(
        distributed_type="DEEPSPEED", mixed_precision="bf16", num_processes=2,
        deepspeed_config={"gradient_accumulation_steps": 1, "gradient_clipping": 1e-05,
                          "zero3_init_flag": False, "zero_stage": 2}), "json", False))
    return cases


def expected_after_update(data, legacy):
    """What must survive `accel config update`: the original, with the
    Accelerate's legacy conversions (the ones `accelerate config update` applies) and accel's fp8 key renames applied.
    Returns (expected, keys that must be gone at top level, fp8 keys that must be gone)."""
    exp = copy.deepcopy(data)
    gone_top = []
    gone_fp8 = []
    if legacy:
        if "fp16" in exp:
            fp16 = exp.pop("fp16")
            gone_top.append("fp16")
            if "mixed_precision" not in exp and fp16:
                exp["mixed_precision"] = "fp16"
        if "dynamo_backend" in exp:
            backend = exp.pop("dynamo_backend")
            gone_top.append("dynamo_backend")
            if str(backend).upper() != "NO":
                exp.setdefault("dynamo_config", {})["dynamo_backend"] = backend
    fp8 = exp.get("fp8_config")
    if isinstance(fp8, dict):
        for old, new in FP8_RENAMES.items():
            if old in fp8:
                fp8[new] = fp8.pop(old)
                gone_fp8.append(old)
    return exp, gone_top, gone_fp8


def check_written_by_pyyaml(res, accel, tmp):
    for name, data, fmt, legacy in build_cases():
        tag = "write/" + name
        ext = ".json" if fmt == "json" else ".yaml"
        src = os.path.join(tmp, "src_" + name + ext)
        if fmt == "yaml":
            text = yaml.safe_dump(data)
        else:
            text = canonical_json(data)
        write_text(src, text)

        good, detail = validate_ok(accel, src)
        res.check(good, tag + ": accel config validate prints ok and exits 0", detail + "\n--- file:\n" + text)

        upd = os.path.join(tmp, "upd_" + name + ext)
        shutil.copyfile(src, upd)
        rc, out = run_accel(accel, ["config", "update", "--config_file", upd])
        if not res.check(rc == 0, tag + ": accel config update exits 0", "rc=%d\n%s" % (rc, out)):
            continue
        first = read_text(upd)

        # Parse the result the way Accelerate would.
        try:
            if fmt == "json":
                loaded = json.loads(first)
            else:
                loaded = yaml.safe_load(first)
        except (ValueError, yaml.YAMLError) as e:
            res.fail(tag + ": updated file loads", "%s\n%s" % (e, first))
            continue
        if not res.check(isinstance(loaded, dict), tag + ": updated file loads as a map", repr(loaded)):
            continue

        # Written in the format Accelerate's writer would produce.
        if fmt == "json":
            want = canonical_json(loaded)
            res.check(first == want, tag + ": updated .json is json.dumps(indent=2, sort_keys=True) + newline",
                      short_diff(want, first, "json.dumps", "accel"))
        else:
            want = canonical_yaml(loaded)
            res.check(first == want, tag + ": updated file is byte-identical to yaml.safe_dump of its content",
                      short_diff(want, first, "yaml.safe_dump", "accel"))

        exp, gone_top, gone_fp8 = expected_after_update(data, legacy)
        problems = compare_preserved(exp, loaded)
        res.check(not problems, tag + ": every key/value/type of the original is preserved",
                  "\n".join(problems) + "\n--- updated file:\n" + first)

        if legacy:
            left = [k for k in gone_top if k in loaded]
            res.check(not left, tag + ": legacy keys %s removed" % ",".join(gone_top), "still present: %s" % left)
            if "dynamo_backend" in gone_top and str(data.get("dynamo_backend")).upper() == "NO":
                res.check(not loaded.get("dynamo_config"),
                          tag + ": dynamo_backend NO gives no dynamo_config",
                          "got dynamo_config=%r" % loaded.get("dynamo_config"))
        if gone_fp8:
            left = [k for k in gone_fp8 if k in loaded.get("fp8_config", {})]
            res.check(not left, tag + ": fp8 wizard names %s renamed" % ",".join(gone_fp8),
                      "still present: %s" % left)

        for key in ("distributed_type", "mixed_precision", "gpu_ids"):
            if key in loaded:
                v = loaded[key]
                res.check(isinstance(v, str), "%s: updated %s loads as str" % (tag, key),
                          "got %s %r" % (type_name(v), v))

        # A second update must be a no-op.
        rc, out = run_accel(accel, ["config", "update", "--config_file", upd])
        if res.check(rc == 0, tag + ": second accel config update exits 0", "rc=%d\n%s" % (rc, out)):
            second = read_text(upd)
            res.check(second == first, tag + ": second update is byte-identical to the first",
                      short_diff(first, second, "first update", "second update"))

        # And accel must still accept what it wrote.
        good, detail = validate_ok(accel, upd)
        res.check(good, tag + ": accel config validate accepts the updated file", detail)


# --------------------------------------------------------------------------
# c) input that PyYAML misreads but accel must handle

BAD_INPUTS = [
    # (name, raw text, {key: expected string after update})
    ("bare_NO_and_no",
     "distributed_type: NO\nmixed_precision: no\n",
     {"distributed_type": "NO", "mixed_precision": "no"}),
    ("bare_NO_and_no_full_file",
     "compute_environment: LOCAL_MACHINE\n"
     "debug: false\n"
     "distributed_type: NO\n"
     "gpu_ids: all\n"
     "machine_rank: 0\n"
     "mixed_precision: no\n"
     "num_machines: 1\n"
     "num_processes: 1\n"
     "use_cpu: false\n",
     {"distributed_type": "NO", "mixed_precision": "no", "gpu_ids": "all"}),
    # Accelerate's own examples/config_yaml_templates/single_accelerator.yaml
    ("double_quoted_minimal_example",
     'distributed_type: "NO"\nmixed_precision: "bf16"\n',
     {"distributed_type": "NO", "mixed_precision": "bf16"}),
]


def check_bad_inputs(res, accel, tmp):
    for name, raw, want in BAD_INPUTS:
        tag = "yaml11/" + name
        path = os.path.join(tmp, "bad_" + name + ".yaml")
        write_text(path, raw)

        good, detail = validate_ok(accel, path)
        res.check(good, tag + ": accel config validate prints ok and exits 0", detail + "\n--- file:\n" + raw)

        rc, out = run_accel(accel, ["config", "update", "--config_file", path])
        if not res.check(rc == 0, tag + ": accel config update exits 0", "rc=%d\n%s" % (rc, out)):
            continue
        text = read_text(path)
        try:
            loaded = yaml.safe_load(text)
        except yaml.YAMLError as e:
            res.fail(tag + ": updated file loads with PyYAML", e)
            continue
        if not res.check(isinstance(loaded, dict), tag + ": updated file loads as a map", repr(loaded)):
            continue
        for key, value in want.items():
            got = loaded.get(key)
            res.check(type(got) is str and got == value,
                      "%s: PyYAML loads updated %s as str %r" % (tag, key, value),
                      "got %s %r\n--- updated file:\n%s" % (type_name(got), got, text))
        res.check(canonical_yaml(loaded) == text,
                  tag + ": updated file is byte-identical to yaml.safe_dump of its content",
                  short_diff(canonical_yaml(loaded), text, "yaml.safe_dump", "accel"))


# --------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--accel", default=os.path.join(REPO_ROOT, "build", "bin", "accel"),
                    help="path to the accel binary")
    ap.add_argument("--golden", default=os.path.join(REPO_ROOT, "tests", "golden"),
                    help="directory of golden *.yaml files (may be empty)")
    ap.add_argument("--templates", default=os.path.join(REPO_ROOT, "config-templates"),
                    help="directory of template *.yaml files")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()

    res = Results()
    accel = os.path.abspath(args.accel)
    if not (os.path.isfile(accel) and os.access(accel, os.X_OK)):
        res.fail("accel binary is executable", accel)
        print("%d passed, %d failed" % (res.passed, res.failed))
        return 1

    tmp = tempfile.mkdtemp(prefix="accel-pyyaml-compat-")
    # Keep accel away from the user's real default config while testing.
    os.environ["HF_HOME"] = os.path.join(tmp, "hf_home")
    try:
        check_existing_files(res, accel, "golden", args.golden, tmp)
        check_existing_files(res, accel, "templates", args.templates, tmp)
        check_written_by_pyyaml(res, accel, tmp)
        check_bad_inputs(res, accel, tmp)
    finally:
        if args.keep:
            print("note: temporary files kept in " + tmp, flush=True)
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    print("%d passed, %d failed" % (res.passed, res.failed))
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
