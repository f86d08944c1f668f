#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# check_launch_parity.py - a worker sees the same under `accel launch` as under real
# `accelerate launch`. Every case of launch_cases.py (each template of
# config-templates/, and Accelerate 1.15's whole flag list in groups) is launched by both with
# probe_worker.py as the program; per rank, the whole environment each worker received and the
# AcceleratorState / plugins its Accelerator() built are compared. A difference passes only when
# launch_differences.txt lists it with its reason; a listed one that no case shows any more fails
# too (the list stays true), and so does a listed one docs/launch.md does not name.
# Run by scripts/peers in the peers' virtual environment (ACCEL: the accel binary).
# Arguments: case names to run (default: all). Exit 1 on any unlisted difference.
import json
import os
import re
import shutil
import sys
import tempfile

import process_group
import yaml
from launch_cases import CASES, ROOT, uncovered_flags
from listed_differences import check_listed, load_listed, print_problems

ACCEL = os.path.abspath(os.environ.get("ACCEL", os.path.join(ROOT, "build", "bin", "accel")))
PROBE = os.path.join(ROOT, "tests", "peers", "probe_worker.py")
LISTED = os.path.join(ROOT, "tests", "peers", "launch_differences.txt")
TIMEOUT = 300


def config_file(case, tmp):
    """The case's config file; with edits, a copy of it with those keys changed."""
    path = os.path.join(ROOT, case.config)
    if not case.edits:
        return path
    with open(path) as f:
        config = yaml.safe_load(f)
    for dotted, value in case.edits.items():
        *sections, key = dotted.split(".")
        node = config
        for section in sections:
            node = node.setdefault(section, {})
        node[key] = value
    path = os.path.join(tmp, case.slug + ".yaml")
    with open(path, "w") as f:
        yaml.safe_dump(config, f)
    return path


def launcher_command(who, case, out, machine_rank, tmp):
    config = ["--config_file", config_file(case, tmp)] if case.config else []
    ranks = ["--machine_rank", str(machine_rank)] if case.machines > 1 else []
    program = case.program(PROBE, out)
    if who == "accelerate":
        return [os.path.join(os.path.dirname(sys.executable), "accelerate"), "launch", *config, *ranks,
                *case.args, *program]
    return [ACCEL, "launch", *config, *ranks, *case.args, *program]


def run_launcher(who, case, out, tmp):
    """Both launchers get the same environment: a fresh HF_HOME (no default_config.yaml of the
    machine's), accel's fake NVML showing the case's GPUs (inherited by both, so no difference;
    none for a case on this machine as it is), and ACCEL_PYTHON, the interpreter accel runs a .py
    with (this venv's, as accelerate's workers)."""
    env = {**os.environ, "HF_HOME": os.path.join(tmp, "hf"), "ACCEL_PYTHON": sys.executable,
           "PYTHONWARNINGS": "ignore"}
    if case.gpus is not None:
        env.update(ACCEL_NVML_LIBRARY=os.path.join(os.path.dirname(os.path.dirname(ACCEL)), "lib", "libfake_nvml.so"),
                   FAKE_NVML_GPUS=str(case.gpus))
    if os.geteuid() == 0:  # Open MPI refuses root unless told; accel tells it, Accelerate does not
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    procs = [process_group.start(launcher_command(who, case, out, m, tmp), cwd=case.cwd(ROOT), env=env)
             for m in range(case.machines)]
    results = [process_group.finish(p, TIMEOUT) for p in procs]
    return [code for code, _, _ in results], "\n".join(out + err for _, out, err in results)


def read_ranks(out):
    ranks = {}
    for name in os.listdir(out):
        m = re.fullmatch(r"(env|state)-(\d+)\.json", name)
        if m:
            with open(os.path.join(out, name)) as f:
                ranks.setdefault(int(m.group(2)), {})[m.group(1)] = json.load(f)
    return ranks


def normalise_env(env, out):
    """Values that differ from run to run whatever the launcher are compared as 'set or not':
    a path of each launcher's own, and mpirun's own per-run variables (OMPI_*, PMIX_*)."""
    env = {k: v.replace(out, "<out>") for k, v in env.items()}
    for key in env:
        if key == "TORCHELASTIC_ERROR_FILE" or key.startswith(("OMPI_", "PMIX_")):
            env[key] = "<set>"
    return env


def differences(theirs, ours):
    """[(kind, name, accelerate's, accel's)] for one rank."""
    found = []
    for kind in ("env", "state"):
        a, b = theirs.get(kind, {}), ours.get(kind, {})
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                found.append((kind, key, a.get(key, "<unset>"), b.get(key, "<unset>")))
    return found


def short(value):
    text = json.dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= 70 else text[:67] + "..."


def check_case(case, tmp, listed, seen):
    outs = {who: os.path.join(tmp, case.slug, who) for who in ("accelerate", "accel")}
    results = {}
    for who, out in outs.items():
        os.makedirs(out)
        codes, log = run_launcher(who, case, out, tmp)
        ranks = read_ranks(out)
        for rank in ranks.values():
            rank["env"] = normalise_env(rank.get("env", {}), out)
        results[who] = (codes, log, ranks)
    (their_codes, their_log, theirs), (our_codes, our_log, ours) = results["accelerate"], results["accel"]
    problems = []
    failed_launch = any(c != 0 for c in their_codes + our_codes)  # None: killed at the timeout
    if failed_launch or set(theirs) != set(ours) or not theirs:
        problems.append(f"exit codes accelerate {their_codes}, accel {our_codes}; ranks accelerate "
                        f"{sorted(theirs)}, accel {sorted(ours)}")
    listed_here = set()
    for rank in sorted(set(theirs) & set(ours)):
        for kind, name, a, b in differences(theirs[rank], ours[rank]):
            if (kind, name) in listed:
                listed_here.add((kind, name))
                seen.add((kind, name))
            else:
                problems.append(f"rank {rank} {kind} {name}: accelerate {short(a)}, accel {short(b)}")
    state = next(iter(ours.values()), {}).get("state", {})
    what = state.get("exception") or f"{state.get('distributed_type')}, {state.get('num_processes')} process(es)"
    variables = len(next(iter(ours.values()), {}).get("env", {}))
    print(f"{'FAIL' if problems else 'ok  '} {case.name}: {len(ours)} worker(s), {variables} variables; "
          f"Accelerator: {short(what)}; listed differences: {', '.join(sorted(n for _, n in listed_here)) or 'none'}")
    print_problems(problems, failed_launch, [("accelerate launch", their_log), ("accel launch", our_log)])
    return not problems


def main():
    wanted = set(sys.argv[1:])
    cases = [c for c in CASES if not wanted or c.name in wanted or c.slug in wanted]
    if wanted and not cases:
        print(f"no case named {sorted(wanted)}; cases: {', '.join(c.slug for c in CASES)}", file=sys.stderr)
        return 2
    missing = uncovered_flags()
    if missing:
        print(f"FAIL Accelerate 1.15 flags in no case of launch_cases.py (nor in NOT_LAUNCHED): {', '.join(missing)}")
    listed, seen = load_listed(LISTED, ("env", "state")), set()
    tmp = tempfile.mkdtemp(prefix="accel-launch-parity-")
    passed = sum(check_case(case, tmp, listed, seen) for case in cases)
    failed = len(cases) - passed + check_listed(listed, seen, not wanted, LISTED) + len(missing)
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"launch parity: {passed} of {len(cases)} cases the same under accel and accelerate launch, "
          f"{len(seen)} listed differences seen")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
