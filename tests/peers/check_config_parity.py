#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# check_config_parity.py - accel and Accelerate read the same config files the same way
# (issue 14, part 2): every file of config-templates/ and tests/golden/, and the files Accelerate
# itself writes (`accelerate config default`, JSON under a .yaml name, with and without
# --mixed_precision; write_basic_config), is loaded by Accelerate's own loader
# (load_config_from_file, which rejects unknown keys) and by `accel config show --json`; every
# key either side has a value for must have the same value on the other. Run by scripts/peers in the peers' virtual environment (ACCEL: the accel binary).
# Prints one line per file and every difference; exit 1 on any. Arguments: other files instead.
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

from accelerate.commands.config.config_args import load_config_from_file
from accelerate.utils import write_basic_config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ACCEL = os.environ.get("ACCEL", os.path.join(ROOT, "build", "bin", "accel"))


def flatten(d, prefix=""):
    """Accelerate's nested sections (fsdp_config: {...}) as accel's dotted keys."""
    out = {}
    for key, value in (d or {}).items():
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{key}."))
        elif value is not None:
            out[prefix + key] = value
    return out


def accelerate_values(path):
    return flatten(load_config_from_file(path).to_dict())


def accel_values(path):
    shown = subprocess.run([ACCEL, "config", "show", "--json", "--config_file", path],
                           capture_output=True, text=True, check=True)
    values = json.loads(shown.stdout)["values"]
    return {k: v["value"] for k, v in values.items() if v.get("source") == "file" and v["value"] is not None}


def same(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or str(a).lower() == str(b).lower()
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return a == b or str(a) == str(b)


def compare(path):
    theirs, ours = accelerate_values(path), accel_values(path)
    problems = []
    for key in sorted(set(theirs) | set(ours)):
        if key not in ours:
            problems.append(f"{key}: Accelerate {theirs[key]!r}, accel has no value")
        elif key not in theirs:
            problems.append(f"{key}: accel {ours[key]!r}, Accelerate has no value")
        elif not same(theirs[key], ours[key]):
            problems.append(f"{key}: Accelerate {theirs[key]!r}, accel {ours[key]!r}")
    return len(theirs), problems


def written_by_accelerate(tmp):
    """The files Accelerate writes itself, as a user gets them."""
    files = []
    accelerate_cli = os.path.join(os.path.dirname(sys.executable), "accelerate")
    for name, extra in (("default.yaml", []), ("default_bf16.yaml", ["--mixed_precision", "bf16"])):
        path = os.path.join(tmp, name)
        subprocess.run([accelerate_cli, "config", "default", "--config_file", path, *extra], check=True,
                       capture_output=True, env={**os.environ, "HF_HOME": tmp})
        files.append(path)
    path = os.path.join(tmp, "basic_fp16.yaml")
    write_basic_config(mixed_precision="fp16", save_location=path)
    return files + [path]


def main():
    files = sys.argv[1:] or sorted(glob.glob(os.path.join(ROOT, "config-templates", "*.yaml")) +
                                   glob.glob(os.path.join(ROOT, "tests", "golden", "*.yaml")))
    tmp = tempfile.mkdtemp(prefix="accel-peers-")
    if len(sys.argv) == 1:
        files += written_by_accelerate(tmp)
    if not files:
        print("no config files found", file=sys.stderr)
        return 1
    failed = 0
    for path in files:
        name = os.path.relpath(path, ROOT)
        try:
            count, problems = compare(path)
        except Exception as e:  # a file one side rejects is a difference too
            print(f"FAIL {name}: {type(e).__name__}: {e}")
            failed += 1
            continue
        print(f"{'FAIL' if problems else 'ok  '} {name}: {count} values")
        for p in problems:
            print(f"       {p}")
        failed += bool(problems)
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"config parity: {len(files) - failed} of {len(files)} files read the same by Accelerate and accel")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
