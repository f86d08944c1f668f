#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# check_elastic_accelerate.py - a real Accelerate script (elastic_accelerate.py: save_state every
# 5 steps, load_state whenever it starts) under `accel launch --nnodes 2:3` on three hosts of the
# namespace cluster, one of which is lost: it completes, and its loss equals static runs split
# where it resumed. The case lives with the other elastic ones (tests/cluster/elastic_cases.sh,
# elastic_accelerate); this runs it with this venv's Accelerate and torch 2.15.
# Needs root and ip netns (the cluster); elsewhere it says it is skipped, and why.
# Run by scripts/peers in the peers' virtual environment (ACCEL: the accel binary). Exit 1 on a miss.
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ACCEL = os.path.abspath(os.environ.get("ACCEL", os.path.join(ROOT, "build", "bin", "accel")))
BUILD = os.path.dirname(os.path.dirname(ACCEL))


def main():
    if os.geteuid() != 0:
        print("skipped: elastic_accelerate needs root for the namespace cluster (ip netns)")
        return 0
    env = {**os.environ, "ACCEL_CLUSTER_ONLY": "elastic_accelerate", "ACCEL_PEERS_PYTHON": sys.executable}
    run = subprocess.run([os.path.join(ROOT, "tests", "cluster", "cluster_test.sh"), BUILD], env=env,
                         capture_output=True, text=True, timeout=900)
    print(run.stdout + run.stderr)
    if run.returncode == 77:
        print("skipped: the namespace cluster cannot run here (see above)")
        return 0
    if run.returncode != 0 or "PASS elastic_accelerate" not in run.stdout:
        print("FAIL: elastic_accelerate")
        return 1
    print("ok: an Accelerate script's save_state/load_state across a lost host equals static runs split there")
    return 0


if __name__ == "__main__":
    sys.exit(main())
