#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# check_to_fsdp2.py - `accel to-fsdp2` writes, byte for byte, the file `accelerate to-fsdp2` writes
#: every FSDP file of config-templates/, tests/golden/ and tests/peers/corpus/, and FSDP1 files
# made here that cover every key Accelerate's to_fsdp2.py renames, drops or converts (each
# strategy name under both keys, both keys in both orders, values it keeps as they are, text
# PyYAML must quote or fold), is converted by both with --output_file (and with --overwrite) and
# the two files must be equal. On bad input both must fail and write nothing (Accelerate exits 1
# with a traceback, or 2 for argparse; accel 2 with a message), except where accel differs on
# purpose (DIFFERENCES). Accelerate's command runs in this process through its own CLI entry
# point (one torch import instead of one per case). Run by scripts/peers in the peers' virtual
# environment (ACCEL: the accel binary). Prints one line per case; exit 1 on any difference.
import contextlib
import glob
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

from accelerate.commands.accelerate_cli import main as accelerate_main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ACCEL = os.path.abspath(os.environ.get("ACCEL", os.path.join(ROOT, "build", "bin", "accel")))

# Where accel's outcome differs on purpose: (Accelerate's, accel's), "ok" or "fails".
DIFFERENCES = {
    # Accelerate copies a file without FSDP settings unchanged and says nothing; accel says so.
    "no_fsdp_config": ("ok", "fails"),
    "empty_fsdp_config": ("ok", "fails"),
}

STRATEGIES = ["FULL_SHARD", "SHARD_GRAD_OP", "HYBRID_SHARD", "HYBRID_SHARD_ZERO2", "NO_SHARD"]

FSDP1_ALL_KEYS = """compute_environment: LOCAL_MACHINE
debug: false
distributed_type: FSDP
downcast_bf16: 'no'
enable_cpu_affinity: false
fsdp_config:
  fsdp_activation_checkpointing: true
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
  fsdp_backward_prefetch: BACKWARD_PRE
  fsdp_cpu_ram_efficient_loading: true
  fsdp_forward_prefetch: false
  fsdp_min_num_params: 0
  fsdp_offload_params: false
  fsdp_sharding_strategy: FULL_SHARD
  fsdp_state_dict_type: SHARDED_STATE_DICT
  fsdp_sync_module_states: true
  fsdp_transformer_layer_cls_to_wrap: LlamaDecoderLayer,MistralDecoderLayer
  fsdp_use_orig_params: true
  fsdp_version: 1
machine_rank: 0
main_training_function: main
mixed_precision: bf16
num_machines: 1
num_processes: 8
rdzv_backend: static
same_network: true
tpu_env: []
tpu_use_cluster: false
tpu_use_sudo: false
use_cpu: false
"""

ODD_VALUES = """# comments, another order, values PyYAML quotes, folds or types
zeta: null
alpha: {}
num_processes: 2
distributed_type: FSDP
gpu_ids: '0,1'
main_process_ip: 10.0.0.1
dynamo_config:
  dynamo_backend: INDUCTOR
fsdp_config:
  fsdp_version: 1.0
  fsdp_sharding_strategy: "SHARD_GRAD_OP"
  fsdp_transformer_layer_cls_to_wrap: [LlamaDecoderLayer, 'yes', '1e3', "0x10", '']
  fsdp_unknown_option: {nested: [1, 2.5, 1e-05, .inf, ~], other: "tab\\there"}
  fsdp_offload_params: yes
  fsdp_note: "caf\\u00e9 and a long sentence that goes on well past the eightieth column so that PyYAML folds it"
  fsdp_min_num_params: 1_000_000
  fsdp_state_dict_type: 'NO'
  fsdp_cpu_ram_efficient_loading: off
"""


def long_texts():
    """Texts PyYAML double-quotes and breaks past column 80: escapes on both sides of the width."""
    texts = ["caf\u00e9 " * 20, "\t" * 50, "x" * 70 + "\u00e9" + " y" * 30, "\u00e9" * 90,
             " lead " + "w " * 60 + "\u2028", "a b\u00e9" * 40, "\U0001F600 z" * 30, "k  " * 40 + "\n"]

    def q(text):  # YAML's double quotes; U+2028 escaped, as a raw one is a line break to PyYAML only
        return json.dumps(text, ensure_ascii=False).replace("\u2028", "\\u2028")

    lines = ["distributed_type: FSDP", f"top_text: {q(texts[0])}", "fsdp_config:"]
    lines += [f"  fsdp_text_{i}: {q(t)}" for i, t in enumerate(texts)]
    lines += ["  fsdp_text_list:"] + [f"  - {q(t)}" for t in texts]
    lines += ["  fsdp_text_map:", "    deeper:"] + [f"      t{i}: {q(t)}" for i, t in enumerate(texts)]
    return "\n".join(lines) + "\n"


def generated():
    """{name: text} of FSDP1 files covering every rule of the conversion."""
    files = {"all_keys": FSDP1_ALL_KEYS, "odd_values": ODD_VALUES}
    for strategy in STRATEGIES:
        for key in ("fsdp_sharding_strategy", "fsdp_reshard_after_forward"):
            files[f"{key}_{strategy}"] = f"distributed_type: FSDP\nfsdp_config:\n  {key}: {strategy}\n"
    files["both_keys_sharding_last"] = ("distributed_type: FSDP\nfsdp_config:\n  fsdp_reshard_after_forward: "
                                        "SHARD_GRAD_OP\n  fsdp_sharding_strategy: HYBRID_SHARD\n")
    files["both_keys_reshard_last"] = ("distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: NO_SHARD\n"
                                       "  fsdp_reshard_after_forward: FULL_SHARD\n")
    files["duplicate_keys"] = ("distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n"
                               "  fsdp_reshard_after_forward: false\n  fsdp_sharding_strategy: SHARD_GRAD_OP\n")
    files["strategy_kept_values"] = ("distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: 1\n"
                                     "  fsdp_reshard_after_forward: full_shard\n")
    files["strategy_bool"] = "distributed_type: FSDP\nfsdp_config:\n  fsdp_reshard_after_forward: true\n"
    files["without_version"] = "distributed_type: FSDP\nfsdp_config:\n  fsdp_use_orig_params: false\n"
    files["already_fsdp2_float"] = "distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 2.0\n  fsdp_use_orig_params: 1\n"
    files["already_fsdp2_old_keys"] = ("fsdp_config:\n  fsdp_version: 2\n  fsdp_sharding_strategy: FULL_SHARD\n"
                                       "distributed_type: FSDP\n")
    files["version_text_2"] = "distributed_type: FSDP\nfsdp_config:\n  fsdp_version: '2'\n"
    files["long_texts"] = long_texts()
    files["json_file"] = '{"distributed_type": "FSDP", "fsdp_config": {"fsdp_sharding_strategy": "FULL_SHARD"}}\n'
    return files


BAD = {
    "missing_file": None,
    "empty": "",
    "only_comment": "# nothing\n",
    "top_level_list": "- distributed_type: FSDP\n",
    "top_level_text": "FSDP\n",
    "broken_yaml": "distributed_type: FSDP\nfsdp_config:\n  a: [1, 2\n",
    "fsdp_config_text": "distributed_type: FSDP\nfsdp_config: FULL_SHARD\n",
    "fsdp_config_list": "distributed_type: FSDP\nfsdp_config:\n- fsdp_version\n",
    "strategy_list": "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: [FULL_SHARD]\n",
    "no_fsdp_config": "distributed_type: MULTI_GPU\nnum_processes: 2\n",
    "empty_fsdp_config": "distributed_type: FSDP\nfsdp_config: {}\n",
}


def run_accelerate(args):
    """Exit status of `accelerate ARGS`, run by its own entry point in this process."""
    saved = sys.argv
    sys.argv = ["accelerate", *args]
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            accelerate_main()
        return 0
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 1
    except Exception:  # noqa: BLE001 - an uncaught exception: Python exits 1
        return 1
    finally:
        sys.argv = saved


def run_accel(args):
    return subprocess.run([ACCEL, *args], capture_output=True, text=True)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def compare_conversion(name, source, tmp):
    """Both tools convert `source` with --output_file and with --overwrite: same bytes."""
    problems = []
    for mode in ("output_file", "overwrite"):
        outputs = []
        for who in ("accelerate", "accel"):
            if mode == "output_file":
                out = os.path.join(tmp, f"{name}.{who}.out.yaml")
                args = ["to-fsdp2", "--config_file", source, "--output_file", out]
            else:
                out = os.path.join(tmp, f"{name}.{who}.in-place{os.path.splitext(source)[1]}")
                shutil.copy(source, out)
                args = ["to-fsdp2", "--config_file", out, "--overwrite"]
            status = run_accelerate(args) if who == "accelerate" else run_accel(args)
            code = status if who == "accelerate" else status.returncode
            if code != 0:
                problems.append(f"{mode}: {who} exit {code}" + (f": {status.stderr.strip()}" if who == "accel" else ""))
            outputs.append(read(out) if os.path.exists(out) else None)
        if not problems and outputs[0] != outputs[1]:
            problems.append(f"{mode}: files differ\n--- accelerate\n{outputs[0].decode(errors='replace')}"
                            f"--- accel\n{(outputs[1] or b'').decode(errors='replace')}")
    return problems


def compare_bad(name, text, tmp):
    """Both fail (or, where listed, differ as listed) and neither writes its output file."""
    source = os.path.join(tmp, f"bad-{name}.yaml")
    if text is not None:
        with open(source, "w") as f:
            f.write(text)
    outcomes = []
    for who in ("accelerate", "accel"):
        out = os.path.join(tmp, f"bad-{name}.{who}.out.yaml")
        args = ["to-fsdp2", "--config_file", source, "--output_file", out]
        code = run_accelerate(args) if who == "accelerate" else run_accel(args).returncode
        outcomes.append(("ok" if code == 0 else "fails", os.path.exists(out)))
    expected = DIFFERENCES.get(name, ("fails", "fails"))
    got = (outcomes[0][0], outcomes[1][0])
    problems = [] if got == expected else [f"Accelerate {got[0]}, accel {got[1]}; expected {expected}"]
    if outcomes[1][0] == "fails" and outcomes[1][1]:
        problems.append("accel failed but wrote its output file")
    return problems


def compare_usage(tmp):
    """The command-line refusals: no --config_file, no --output_file, an existing output file."""
    source = os.path.join(tmp, "usage.yaml")
    with open(source, "w") as f:
        f.write(FSDP1_ALL_KEYS)
    existing = os.path.join(tmp, "existing.yaml")
    cases = {
        "no --config_file": ["to-fsdp2", "--output_file", os.path.join(tmp, "never.yaml")],
        "no --output_file, no --overwrite": ["to-fsdp2", "--config_file", source],
        "existing --output_file": ["to-fsdp2", "--config_file", source, "--output_file", existing],
    }
    results = []
    for name, args in cases.items():
        with open(existing, "w") as f:
            f.write("keep: me\n")
        theirs, ours = run_accelerate(args), run_accel(args).returncode
        problems = [] if theirs != 0 and ours != 0 else [f"Accelerate exit {theirs}, accel exit {ours}"]
        if read(existing) != b"keep: me\n" or read(source) != FSDP1_ALL_KEYS.encode():
            problems.append("a file was changed")
        results.append((name, problems))
    return results


def main():
    tmp = tempfile.mkdtemp(prefix="accel-to-fsdp2-")
    sources = [p for p in sorted(glob.glob(os.path.join(ROOT, "config-templates", "*.yaml")) +
                                 glob.glob(os.path.join(ROOT, "tests", "golden", "*.yaml")) +
                                 glob.glob(os.path.join(ROOT, "tests", "peers", "corpus", "*.yaml")))
               if "fsdp_config" in open(p).read()]
    cases = [(os.path.relpath(p, ROOT), p) for p in sources]
    for name, text in generated().items():
        path = os.path.join(tmp, f"{name}{'.json' if name.startswith('json') else '.yaml'}")
        with open(path, "w") as f:
            f.write(text)
        cases.append((name, path))
    results = [(f"convert {name}", compare_conversion(f"{i}-{os.path.basename(name)}", path, tmp))
               for i, (name, path) in enumerate(cases)]
    results += [(f"refuse {name}", compare_bad(name, text, tmp)) for name, text in BAD.items()]
    results += [(f"refuse {name}", problems) for name, problems in compare_usage(tmp)]
    failed = 0
    for name, problems in results:
        print(f"{'FAIL' if problems else 'ok  '} {name}")
        for p in problems:
            print(f"       {p}")
        failed += bool(problems)
    print(f"to-fsdp2 parity: {len(results) - failed} of {len(results)} cases the same from Accelerate and accel")
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
