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
import json
import os
import shutil
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pyyaml_cases import BAD_INPUTS, build_cases  # noqa: E402
from pyyaml_support import (Results, canonical_json, canonical_yaml, compare_preserved,  # noqa: E402
                            is_json_text, load_map, read_text, run_accel, short_diff, type_name, validate_ok,
                            write_text)

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
        data = load_map(res, tag, text, "the file")
        if data is None:
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
        loaded = load_map(res, tag, text, "the updated file")
        if loaded is None:
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
