# SPDX-License-Identifier: Apache-2.0
"""`accel launch` for the libtorch component's test drivers (parity_test.py, checks_test.py,
example_test.py): one compute thread per process, Gloo on loopback, an HF_HOME of its own (no
user config file), CPU workers unless device is "cuda". A launch whose exit code is not the
expected one ends the driver with the command and its output."""
import os
import subprocess
import sys
import tempfile

ENV = dict(os.environ, HF_HOME=tempfile.mkdtemp(), GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")


def launch(accel, world, argv, env=None, precision="no", device="cpu", expect=0, timeout=600):
    """Runs `accel launch` with `world` processes of argv; returns its stdout and stderr together."""
    cmd = [accel, "launch", *(["--cpu"] if device == "cpu" else []), "--num_processes", str(world),
           "--main_process_port", "0", "--mixed_precision", precision, *[str(a) for a in argv]]
    run = subprocess.run(cmd, env={**ENV, **(env or {})}, capture_output=True, text=True, timeout=timeout)
    if run.returncode != expect:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {run.returncode}, expected {expect}\n{run.stdout}\n{run.stderr}")
    return run.stdout + run.stderr
