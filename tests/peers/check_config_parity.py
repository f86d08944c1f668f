#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# check_config_parity.py - accel and Accelerate read the same config files the same way
#: every file of config-templates/ and tests/golden/, and the files Accelerate
# itself writes (`accelerate config default`, JSON under a .yaml name, with and without
# --mixed_precision; write_basic_config), is loaded by Accelerate's own loader
# (load_config_from_file, which rejects unknown keys) and by `accel config show --json`; every
# key either side has a value for must have the same value on the other. Old files
# (tests/peers/legacy/: `fp16: true`, a top-level dynamo_backend) are compared as they are, after
# `accelerate config update` and after `accel config update`, and the two updated files must hold
# the same values. Run by scripts/peers in the peers' virtual environment (ACCEL: the accel binary).
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
ACCEL = os.path.abspath(os.environ.get("ACCEL", os.path.join(ROOT, "build", "bin", "accel")))


def flatten(d, prefix=""):
    """Accelerate's nested sections (fsdp_config: {...}) as accel's dotted keys."""
    out = {}
    for key, value in (d or {}).items():
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{key}."))
        elif value is not None:
            out[prefix + key] = value
    return out


# Sections whose keys Accelerate's launch reads with a prefix added where missing (fsdp_config's
# sharding_strategy is its --fsdp_sharding_strategy): accel stores them under that name.
PREFIXED_SECTIONS = {"fsdp_config": "fsdp_", "dynamo_config": "dynamo_"}
# Keys whose choices both tools accept in any case; accel stores the canonical spelling.
ANY_CASE = {"dynamo_config.dynamo_backend", "fp8_config.backend"}


def accelerate_values(path):
    """What Accelerate's loader holds, named as its launch reads it."""
    values = load_config_from_file(path).to_dict()
    for section, prefix in PREFIXED_SECTIONS.items():
        if isinstance(values.get(section), dict):
            values[section] = {k if k.startswith(prefix) else prefix + k: v for k, v in values[section].items()}
    flat = flatten(values)
    # Accelerate's "not set" for num_processes (its dataclass default); accel leaves it unset.
    if flat.get("num_processes") == -1:
        del flat["num_processes"]
    return flat


class Refused(Exception):
    """accel refused the file (exit 2)."""


def accel_values(path):
    """(the values accel read from the file, those and the defaults it fills in): Accelerate's
    dataclass fills its defaults too (debug: False, rdzv_backend: static) on an old file."""
    shown = subprocess.run([ACCEL, "config", "show", "--json", "--config_file", path],
                           capture_output=True, text=True)
    if shown.returncode == 2:
        raise Refused(shown.stderr.strip().splitlines()[0] if shown.stderr.strip() else "exit 2")
    shown.check_returncode()
    values = {k: v for k, v in json.loads(shown.stdout)["values"].items() if v["value"] is not None}
    from_file = flatten({k: v["value"] for k, v in values.items() if v.get("source") == "file"})
    return from_file, flatten({k: v["value"] for k, v in values.items() if v.get("source") in ("file", "default")})


def same(a, b, key=""):
    """Accelerate's value a, accel's b. An unquoted NO or no is YAML 1.1's false: Accelerate keeps
    the boolean (and launches as with 'NO' / 'no'), accel reads the word the user meant."""
    if a is False and key in ("distributed_type", "mixed_precision") and b in ("NO", "no"):
        return True
    if key in ANY_CASE and isinstance(a, str) and isinstance(b, str):
        return a.upper() == b.upper()
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or str(a).lower() == str(b).lower()
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return a == b or str(a) == str(b)


def outcome(read, path):
    """The values, or the exception that refused the file."""
    try:
        return read(path), None
    except Exception as e:  # noqa: BLE001 - any refusal is an outcome to compare
        return None, e


def compare(path):
    """(values compared, differences); a file both refuse has none, one refused by one side only
    is a difference naming both outcomes."""
    (theirs, their_error), (ours_pair, our_error) = outcome(accelerate_values, path), outcome(accel_values, path)
    if their_error and our_error:
        return 0, []
    if their_error or our_error:
        return 0, [f"Accelerate: {f'refuses it ({type(their_error).__name__}: {their_error})' if their_error else 'reads it'}"
                   f"; accel: {f'refuses it ({our_error})' if our_error else 'reads it'}"]
    ours, ours_with_defaults = ours_pair
    problems = []
    for key in sorted(set(theirs) | set(ours)):
        if key not in ours and key in ours_with_defaults:
            ours[key] = ours_with_defaults[key]
        if key not in ours:
            problems.append(f"{key}: Accelerate {theirs[key]!r}, accel has no value")
        elif key not in theirs:
            problems.append(f"{key}: accel {ours[key]!r}, Accelerate has no value")
        elif not same(theirs[key], ours[key], key):
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


def updated_legacy_files(tmp):
    """Each old file, and its copies rewritten by `accelerate config update` and `accel config update`."""
    files, pairs = [], []
    accelerate_cli = os.path.join(os.path.dirname(sys.executable), "accelerate")
    for old in sorted(glob.glob(os.path.join(ROOT, "tests", "peers", "legacy", "*.yaml"))):
        stem = os.path.splitext(os.path.basename(old))[0]
        by_them, by_us = (os.path.join(tmp, f"{stem}.{who}-updated.yaml") for who in ("accelerate", "accel"))
        for copy in (by_them, by_us):
            shutil.copy(old, copy)
        subprocess.run([accelerate_cli, "config", "update", "--config_file", by_them], check=True,
                       capture_output=True, env={**os.environ, "HF_HOME": tmp})
        subprocess.run([ACCEL, "config", "update", "--config_file", by_us], check=True, capture_output=True)
        files += [old, by_them, by_us]
        pairs.append((by_them, by_us))
    return files, pairs


def compare_updates(pairs):
    """The file each tool's `config update` wrote holds the same values, as Accelerate reads them."""
    failed = 0
    for by_them, by_us in pairs:
        theirs, ours = accelerate_values(by_them), accelerate_values(by_us)
        problems = [f"{k}: accelerate config update {theirs.get(k)!r}, accel config update {ours.get(k)!r}"
                    for k in sorted(set(theirs) | set(ours)) if not same(theirs.get(k), ours.get(k))]
        name = os.path.basename(by_them).split(".")[0]
        print(f"{'FAIL' if problems else 'ok  '} config update of {name}: {len(theirs)} values, same from both tools")
        for p in problems:
            print(f"       {p}")
        failed += bool(problems)
    return failed


def main():
    files = sys.argv[1:] or sorted(glob.glob(os.path.join(ROOT, "config-templates", "*.yaml")) +
                                   glob.glob(os.path.join(ROOT, "tests", "golden", "*.yaml")) +
                                   glob.glob(os.path.join(ROOT, "tests", "peers", "corpus", "*")))
    tmp = tempfile.mkdtemp(prefix="accel-peers-")
    pairs = []
    if len(sys.argv) == 1:
        files += written_by_accelerate(tmp)
        legacy, pairs = updated_legacy_files(tmp)
        files += legacy
    if not files:
        print("no config files found", file=sys.stderr)
        return 1
    failed = 0
    for path in files:
        name = os.path.relpath(path, ROOT) if path.startswith(ROOT) else os.path.basename(path)
        count, problems = compare(path)
        print(f"{'FAIL' if problems else 'ok  '} {name}: {f'{count} values' if count else 'refused by both'}")
        for p in problems:
            print(f"       {p}")
        failed += bool(problems)
    print(f"config parity: {len(files) - failed} of {len(files)} files read the same by Accelerate and accel")
    update_failed = compare_updates(pairs)
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed or update_failed else 0


if __name__ == "__main__":
    sys.exit(main())
