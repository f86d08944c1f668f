# SPDX-License-Identifier: Apache-2.0
# listed_differences.py - the lists of differences on purpose that the parity checks allow
# (launch_differences.txt, torchrun_differences.txt): `KIND NAME reason` lines, and the check
# that such a list stays true (every entry still occurs, and docs/launch.md names it).
import os
import sys

from launch_cases import ROOT


def load_listed(path, kinds):
    """{(kind, name): reason}; a line of another form stops the check, naming file:line."""
    listed = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split(None, 2)
            if len(fields) < 3 or fields[0] not in kinds:
                sys.exit(f"{path}:{number}: expected `{'|'.join(kinds)} NAME reason`, got {line.strip()!r}")
            listed[(fields[0], fields[1])] = fields[2].strip()
    return listed


def check_listed(listed, seen, ran_all, path):
    """Failures: entries no case showed (when every case ran), entries docs/launch.md omits."""
    failed = 0
    with open(os.path.join(ROOT, "docs", "launch.md")) as f:
        readme = f.read()
    for kind, name in sorted(listed):
        if ran_all and (kind, name) not in seen:
            print(f"FAIL {path}: {kind} {name} is listed but no case shows it any more: remove it")
            failed += 1
        if name not in readme:
            print(f"FAIL docs/launch.md does not name the deliberate difference {name} ({path})")
            failed += 1
    return failed


def print_problems(problems, failed_launch, logs):
    """A case's problems (at most 40), and when a launcher failed the tail of each (title, log)."""
    for p in problems[:40]:
        print(f"       {p}")
    if problems and failed_launch:
        print("\n".join(f"       --- {title} ---\n{log[-3000:]}" for title, log in logs))
