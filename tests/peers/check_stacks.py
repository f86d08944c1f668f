#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# check_stacks.py - `accel stacks` on a hung PyTorch job (hang_worker.py: rank 1 in its own loop,
# rank 0 in dist.all_reduce waiting for it) with the real torch and py-spy of the peers' venv: each
# rank's stack and a summary line naming rank 1's file:line and rank 0's all_reduce; then the same
# job under Debian's python3, beside which there is no py-spy: each rank says how to get it, and
# accel stacks still returns at once. Run by scripts/peers in the peers' virtual environment
# (ACCEL: the binary).
import os
import subprocess
import sys
import tempfile
import time

import process_group

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ACCEL = os.path.abspath(os.environ.get("ACCEL", os.path.join(ROOT, "build", "bin", "accel")))
WORKER = os.path.join(ROOT, "tests", "peers", "hang_worker.py")


def hung_job(python, tmp):
    env = {**os.environ, "HF_HOME": tmp, "ACCEL_PYTHON": python, "PATH": "/usr/bin:/bin", "PYTHONWARNINGS": "ignore"}
    job = process_group.start([ACCEL, "launch", "--cpu", "--num_processes", "2", "--main_process_port", "0",
                               "--grace_period", "2", WORKER], env=env)
    seen = ""
    deadline = time.monotonic() + 120
    while seen.count(" ready") < 2 and time.monotonic() < deadline:
        line = job.stdout.readline()
        if not line:
            break
        seen += line
    time.sleep(1)  # rank 0 reaches all_reduce
    return job, seen


def stacks(launcher, path):
    start = time.monotonic()
    r = subprocess.run([ACCEL, "stacks", str(launcher), "--timeout", "30"], capture_output=True, text=True,
                       timeout=120, env={**os.environ, "PATH": path})
    return r, time.monotonic() - start


def main():
    tmp = tempfile.mkdtemp(prefix="accel-peers-stacks-")
    job, seen = hung_job(sys.executable, tmp)
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
    for what, ok in checks:
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
    failed = not all(ok for _, ok in checks)
    if failed:
        print("--- accel stacks ---\n" + ours.stdout[-6000:] + ours.stderr[-2000:] + "\n--- without py-spy ---\n" +
              missing.stdout[-2000:] + missing.stderr[-2000:] + "\n--- job ---\n" + seen[-2000:])
    print("\n".join(l for l in lines if l.strip().startswith("rank ")))
    print(f"accel stacks on a hung torch job: {sum(ok for _, ok in checks)} of {len(checks)} checks passed; "
          f"2 ranks read in {seconds:.2f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
