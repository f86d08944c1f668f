#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# check_accel_test.py - `accel test` with real Accelerate: where the interpreter `accel launch`
# gives .py programs has Accelerate (ACCEL_PYTHON: the peers' venv), `accel test` runs
# Accelerate's own test script on 2 CPU processes after its preflight, as `accelerate test` does,
# and passes. Run by scripts/peers in the peers' virtual environment (ACCEL: the binary).
import os
import subprocess
import sys
import tempfile
import time

import process_group

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ACCEL = os.path.abspath(os.environ.get("ACCEL", os.path.join(ROOT, "build", "bin", "accel")))
CONFIG = """compute_environment: LOCAL_MACHINE
distributed_type: MULTI_CPU
main_process_port: 0
mixed_precision: 'no'
num_machines: 1
num_processes: 2
use_cpu: true
"""


def main():
    tmp = tempfile.mkdtemp(prefix="accel-peers-test-")
    config = os.path.join(tmp, "cpu.yaml")
    with open(config, "w") as f:
        f.write(CONFIG)
    env = {**os.environ, "HF_HOME": tmp, "ACCEL_PYTHON": sys.executable, "PYTHONWARNINGS": "ignore"}
    start = time.monotonic()
    ours = subprocess.CompletedProcess([], *process_group.run([ACCEL, "test", "--config_file", config], 600, env=env))
    seconds = time.monotonic() - start
    script = "accelerate/test_utils/scripts/test_script.py"
    checks = [
        ("accel test exits 0", ours.returncode == 0),
        ("the preflight passed", "preflight: all 6 checks passed" in ours.stdout),
        (f"Accelerate's {script} ran through accel launch",
         "accel test: accelerate's test script: accel launch --config_file" in ours.stdout and script in ours.stdout),
        ("Accelerate's script printed its state for 2 processes",
         "Testing, testing. 1, 2, 3." in ours.stdout + ours.stderr and "Num processes: 2" in ours.stdout + ours.stderr),
        ("the verdict", "accel test: every check passed" in ours.stdout),
    ]
    for what, ok in checks:
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
    failed = not all(ok for _, ok in checks)
    if failed:
        print("--- accel test stdout ---\n" + ours.stdout[-6000:] + "\n--- stderr ---\n" + ours.stderr[-4000:])
    print(f"accel test with Accelerate's script: {sum(ok for _, ok in checks)} of {len(checks)} checks passed "
          f"in {seconds:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
