#!/usr/bin/env python3
"""A .json config's syntax is accepted by accel exactly when Python's json.load accepts it.

Accelerate reads .json configs with ``json.load``; accel checks their text and syntax itself
(lib/config/json_syntax.h) before reading the values. Each case below is fed to both:
``json.loads`` either raises or not, and ``accel config validate`` either refuses the text
(invalid JSON, not UTF-8, a value yaml-cpp cannot hold) or not (it may still refuse the file for
another reason: a value, a key). KNOWN lists the one difference, on purpose.

Usage: python3 tests/compat/json_compat.py ACCEL
Prints one line per case and ends with ``N passed, M failed``; exit 1 when any failed.
"""

import json
import os
import subprocess
import sys
import tempfile

BASE = '"distributed_type": "NO"'
CASES = [
    "{%s}" % BASE,
    "{%s,}" % BASE,                                   # trailing comma in an object
    '{%s, "tpu_env": [1, 2,]}' % BASE,                # ... in a list
    "{'distributed_type': 'NO'}",                     # single quotes
    "{distributed_type: \"NO\"}",                     # a bare key
    '{%s, "num_processes": 01}' % BASE,               # a leading zero
    '{%s, "num_processes": 1.}' % BASE,               # a bare dot
    '{%s, "num_processes": .5}' % BASE,
    '{%s, "num_processes": +1}' % BASE,
    '{%s, "num_processes": 1e5}' % BASE,
    '{%s, "num_processes": 1E+5}' % BASE,
    '{%s, "num_processes": -0}' % BASE,
    '{%s, "fp8_config": {"margin": NaN}}' % BASE,      # Python's words for floats
    '{%s, "fp8_config": {"margin": Infinity}}' % BASE,
    '{%s, "fp8_config": {"margin": -Infinity}}' % BASE,
    '{%s, "fp8_config": {"margin": -NaN}}' % BASE,
    '{%s, "fp8_config": {"margin": nan}}' % BASE,
    '{%s, "debug": True}' % BASE,                      # Python's spelling, not JSON's
    '{%s, "debug": true}' % BASE,
    '{%s, "debug": null}' % BASE,
    '{%s, "num_processes": 1, "num_processes": 2}' % BASE,  # a key twice: the last wins
    '{%s, "main_training_function": "a\\qb"}' % BASE,  # an invalid escape
    '{%s, "main_training_function": "a\\u00e9b"}' % BASE,
    '{%s, "main_training_function": "a\\u00g9b"}' % BASE,
    '{%s, "main_training_function": "tab\there"}' % BASE,   # a raw control character
    '{%s, "main_training_function": "x"' % BASE,       # unterminated
    '{%s}} ' % BASE,                                   # extra data
    '{%s} \n\t\r ' % BASE,                             # trailing whitespace
    '\ufeff{%s}' % BASE,                               # a byte order mark
    '',
    ' ',
    '[]',
    '"text"',
    '{%s, "fsdp_config": {"fsdp_x": %s%s}}' % (BASE, "[" * 100, "]" * 100),
    '{%s, "fsdp_config": {"fsdp_x": %s%s}}' % (BASE, "[" * 3000, "]" * 3000),
    '{%s /* comment */}' % BASE,
    '{%s, "num_processes": 0x10}' % BASE,
    '{%s, "main_training_function": "del\x7f"}' % BASE,          # DEL, C1, U+FFFE: Python reads them,
    '{%s, "main_training_function": "c1\u0085x"}' % BASE,        # PyYAML would not
    '{%s, "main_training_function": "\ufffe"}' % BASE,
    '{%s, "main_training_function": "a\\ud800b"}' % BASE,      # a lone surrogate escape
]

# Cases where accel refuses what json.load reads, on purpose: yaml-cpp, which reads the values,
# cannot hold a lone surrogate, and no UTF-8 text (what the writer writes back) can either.
KNOWN = {'{%s, "main_training_function": "a\\ud800b"}' % BASE}


def python_accepts(text):
    try:
        json.loads(text)
        return True
    except (ValueError, RecursionError):
        return False


def accel_accepts_syntax(accel, text, tmp):
    path = os.path.join(tmp, "case.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    r = subprocess.run([accel, "config", "validate", path], capture_output=True, text=True)
    refused = any(word in r.stderr for word in ("invalid JSON", "is not UTF-8 text", "is not allowed in a config file",
                                                "cannot read this JSON value"))
    return not refused, r.stderr.strip().splitlines()[:1]


def main():
    accel = sys.argv[1]
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for text in CASES:
            theirs = python_accepts(text)
            ours, said = accel_accepts_syntax(accel, text, tmp)
            ok = (theirs == ours) != (text in KNOWN)
            passed, failed = passed + ok, failed + (not ok)
            shown = text if len(text) < 70 else text[:60] + "..."
            print(f"{'ok  ' if ok else 'FAIL'} {shown!r}: json.load {'accepts' if theirs else 'refuses'}, "
                  f"accel {'accepts the syntax' if ours else 'refuses the syntax'}{'' if ok else f' {said}'}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
