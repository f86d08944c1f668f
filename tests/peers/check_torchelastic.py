#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# check_torchelastic.py - torchelastic's conventions with real torch: a worker
# whose entry point is decorated with @record has its exception in accel's failure summary, as
# torchrun's summary has it; torch's own `[rank1]: ` traceback prefix is not printed after
# accel's `[rank 1] `. Run by scripts/peers in the peers' virtual environment (ACCEL: the binary).
import os
import socket
import subprocess
import sys
import tempfile

import process_group

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ACCEL = os.path.abspath(os.environ.get("ACCEL", os.path.join(ROOT, "build", "bin", "accel")))
WORKER = os.path.join(ROOT, "tests", "peers", "record_worker.py")
MESSAGE = "RuntimeError: disk quota exceeded on rank 1"


def main():
    tmp = tempfile.mkdtemp(prefix="accel-peers-record-")
    env = {**os.environ, "HF_HOME": tmp, "ACCEL_PYTHON": sys.executable, "PYTHONWARNINGS": "ignore"}
    ours = subprocess.CompletedProcess([], *process_group.run(
        [ACCEL, "launch", "--cpu", "--num_processes", "2", "--main_process_port", "0", WORKER], 300, env=env))
    with socket.socket() as s:  # torchrun's --master_port 0 hangs its static rendezvous (torch 2.15)
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    theirs = subprocess.CompletedProcess([], *process_group.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", port, WORKER],
        300, env=env))
    checks = [
        ("accel launch exits with the worker's code 1", ours.returncode == 1),
        (f"accel's summary: `accel: rank 1 raised {MESSAGE}`", f"accel: rank 1 raised {MESSAGE}\n" in ours.stderr),
        ("accel's summary shows the traceback from the error file",
         "accel: its traceback (from its TORCHELASTIC_ERROR_FILE)" in ours.stderr
         and 'accel:   |     raise RuntimeError("disk quota exceeded on rank 1")' in ours.stderr),
        ("torch's traceback is shown once prefixed, as `[rank 1] Traceback`",
         "[rank 1] Traceback (most recent call last):" in ours.stderr),
        ("no `[rank1]:` after accel's prefix", "[rank1]:" not in ours.stderr + ours.stdout),
        (f"torchrun's summary names the same exception ({MESSAGE})", theirs.returncode != 0 and MESSAGE in theirs.stderr),
    ]
    for what, ok in checks:
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
    failed = not all(ok for _, ok in checks)
    if failed:
        print("--- accel launch stderr ---\n" + ours.stderr[-4000:] + "\n--- torchrun stderr ---\n" + theirs.stderr[-3000:])
    print(f"torchelastic conventions: {sum(ok for _, ok in checks)} of {len(checks)} checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
