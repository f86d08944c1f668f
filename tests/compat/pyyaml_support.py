"""What the PyYAML compatibility check (pyyaml_compat.py) uses to run accel and compare files:
the results tally, file helpers, accel's exit and output, and PyYAML's own canonical forms."""

import difflib
import json
import subprocess

import yaml

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


def load_map(res, tag, text, what):
    """The map PyYAML loads from `text`, or None once `res` has recorded why not."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        res.fail("%s: %s loads with PyYAML" % (tag, what), e)
        return None
    if not res.check(isinstance(data, dict), "%s: %s loads as a map" % (tag, what), "got %s %r" % (type_name(data), data)):
        return None
    return data
