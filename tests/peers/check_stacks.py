#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# check_stacks.py - `accel stacks` on a hung PyTorch job (hang_worker.py: rank 1 in its own loop,
# rank 0 in dist.all_reduce waiting for it) with the real torch and py-spy of the peers' venv: each
# rank's stack and a summary line naming rank 1's file:line and rank 0's all_reduce; then the same
# job under Debian's python3, beside which there is no py-spy: each rank says how to get it, and
# accel stacks still returns at once. Then the same hung job under --hang_timeout 5: about 5 s
# after the last output the launcher reads every rank's stack and stops the job, its failure
# summary naming the same places (exit 1); without py-spy each rank says how to get it and the
# job still stops on time. Run by scripts/peers in the peers' virtual environment (ACCEL: the
# binary).
import os
import re
import subprocess
import sys
import tempfile
import time

import process_group

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ACCEL = os.path.abspath(os.environ.get("ACCEL", os.path.join(ROOT, "build", "bin", "accel")))
WORKER = os.path.join(ROOT, "tests", "peers", "hang_worker.py")


def hung_job(python, tmp, extra=()):
    env = {**os.environ, "HF_HOME": tmp, "ACCEL_PYTHON": python, "PATH": "/usr/bin:/bin", "PYTHONWARNINGS": "ignore"}
    job = process_group.start([ACCEL, "launch", "--cpu", "--num_processes", "2", "--main_process_port", "0",
                               "--grace_period", "2", *extra, WORKER], env=env)
    seen = ""
    deadline = time.monotonic() + 120
    while seen.count(" ready") < 2 and time.monotonic() < deadline:
        line = job.stdout.readline()
        if not line:
            break
        seen += line
    return job, seen


def stopped_by_hang(python, tmp):
    """The hung job under --hang_timeout 5: (its stderr, its exit code, seconds from the last
    rank's "ready" to the launcher's exit)."""
    job, seen = hung_job(python, tmp, ["--hang_timeout", "5"])
    ready_at = time.monotonic()
    code, out, err = process_group.finish(job, 60)
    return seen + out + err, code, time.monotonic() - ready_at


def stacks(launcher, path):
    start = time.monotonic()
    r = subprocess.run([ACCEL, "stacks", str(launcher), "--timeout", "30"], capture_output=True, text=True,
                       timeout=120, env={**os.environ, "PATH": path})
    return r, time.monotonic() - start


def main():
    tmp = tempfile.mkdtemp(prefix="accel-peers-stacks-")
    job, seen = hung_job(sys.executable, tmp)
    time.sleep(1)  # rank 0 reaches all_reduce
    try:
        ours, seconds = stacks(job.pid, "/usr/bin:/bin")
    finally:
        process_group.kill(job)
        job.communicate()
    lines = ours.stdout.splitlines()
    rank0 = next((l for l in lines if l.strip().startswith("rank 0 (pid")), "")
    rank1 = next((l for l in lines if l.strip().startswith("rank 1 (pid")), "")
    checks = [
        ("both ranks said ready", seen.count(" ready") == 2),
        ("accel stacks exits 0", ours.returncode == 0),
        ("py-spy read each rank (found beside the venv's interpreter)",
         "== rank 0 (pid" in ours.stdout and "== rank 1 (pid" in ours.stdout and ", py-spy) ==" in ours.stdout),
        ("rank 0's line: in dist.all_reduce, from step (hang_worker.py:...)",
         "all_reduce (torch/distributed/" in rank0 and "from step (hang_worker.py:" in rank0),
        ("rank 1's line: spin (hang_worker.py:...)", "spin (hang_worker.py:" in rank1),
    ]
    bare, _ = hung_job("/usr/bin/python3", tmp)
    time.sleep(1)
    try:
        missing, missing_seconds = stacks(bare.pid, "/usr/bin:/bin")
    finally:
        process_group.kill(bare)
        bare.communicate()
    checks += [
        ("without py-spy: exit 1 and each rank says how to get it",
         missing.returncode == 1 and missing.stdout.count("): no stack: py-spy is not installed: `pip install py-spy`") == 2),
        ("without py-spy: at once", missing_seconds < 5),
    ]
    hung, hung_code, hung_seconds = stopped_by_hang(sys.executable, tmp)
    summary = [l for l in hung.splitlines() if l.startswith("accel:   rank ")]
    read_in = re.search(r"stacks read in ([0-9.]+) s", hung)
    checks += [
        ("--hang_timeout 5: exit 1, naming the hang",
         hung_code == 1 and "error: no rank made progress for 5 s (--hang_timeout" in hung),
        ("--hang_timeout 5: the summary names rank 1's spin (hang_worker.py:...)",
         any("rank 1 (pid" in l and "spin (hang_worker.py:" in l for l in summary)),
        ("--hang_timeout 5: ... and rank 0 in dist.all_reduce",
         any("rank 0 (pid" in l and "all_reduce (torch/distributed/" in l for l in summary)),
        ("--hang_timeout 5: stopped about 5 s after the last output (stacks, grace period 2 s)",
         4.5 <= hung_seconds < 5 + 4 + 2 + 4),
    ]
    bare_hung, bare_code, bare_seconds = stopped_by_hang("/usr/bin/python3", tmp)
    checks += [
        ("--hang_timeout without py-spy: each rank says how to get it",
         bare_code == 1 and bare_hung.count("): no stack: py-spy is not installed: `pip install py-spy`") == 2),
        ("--hang_timeout without py-spy: stopped on time", 4.5 <= bare_seconds < 5 + 1 + 2 + 4),
    ]
    for what, ok in checks:
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
    failed = not all(ok for _, ok in checks)
    if failed:
        print("--- accel stacks ---\n" + ours.stdout[-6000:] + ours.stderr[-2000:] + "\n--- without py-spy ---\n" +
              missing.stdout[-2000:] + missing.stderr[-2000:] + "\n--- job ---\n" + seen[-2000:] +
              "\n--- --hang_timeout 5 ---\n" + hung[-4000:] + "\n--- without py-spy ---\n" + bare_hung[-3000:])
    print("\n".join(l for l in lines if l.strip().startswith("rank ")))
    print("\n".join(summary))
    print(f"accel stacks on a hung torch job: {sum(ok for _, ok in checks)} of {len(checks)} checks passed; "
          f"2 ranks read in {seconds:.2f} s; --hang_timeout 5 stopped it {hung_seconds:.2f} s after the last output, "
          f"its stacks read in {read_in.group(1) if read_in else '?'} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
