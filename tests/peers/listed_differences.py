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


def rank_problems(peer, their_codes, our_codes, theirs, ours, listed, seen):
    """A case's problems when `peer` and accel launched it: exit codes, ranks, and every
    (kind, name) of a rank that differs unlisted. theirs/ours: {rank: {(kind, name): value}}.
    Returns (problems, whether a launcher failed, the listed names seen here); adds to `seen`."""
    problems = []
    failed = any(c != 0 for c in their_codes + our_codes)
    if failed or set(theirs) != set(ours) or not theirs:
        problems.append(f"exit codes {peer} {their_codes}, accel {our_codes}; ranks {peer} {sorted(theirs)}, "
                        f"accel {sorted(ours)}")
    here = set()
    for rank in sorted(set(theirs) & set(ours)):
        a, b = theirs[rank], ours[rank]
        for key in sorted(set(a) | set(b)):
            if a.get(key) == b.get(key):
                continue
            if key in listed:
                here.add(key[1])
                seen.add(key)
            else:
                problems.append(f"rank {rank} {key[0]} {key[1]}: {peer} {a.get(key, '<unset>')!r}, "
                                f"accel {b.get(key, '<unset>')!r}")
    return problems, failed, here
