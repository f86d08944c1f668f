# SPDX-License-Identifier: Apache-2.0
"""`accel launch` for the libtorch component's test drivers (parity_test.py, checks_test.py,
example_test.py): one compute thread per process, Gloo on loopback, an HF_HOME of its own (no
user config file), CPU workers unless device is "cuda". A launch whose exit code is not the
expected one ends the driver with the command and its output; one that outlives its timeout
ends it with every rank's stack (`accel stacks`), then the output."""
import os
import subprocess
import sys
import tempfile

ENV = dict(os.environ, HF_HOME=tempfile.mkdtemp(), GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")


def where_ranks_are(accel, launcher):
    """Every rank's stack as `accel stacks` reads it (Python's through py-spy, where installed), and
    each rank's native threads through gdb (where a rank spins inside libtorch or Gloo)."""
    def output(argv):
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
            return r.stdout + r.stderr
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"{argv[0]}: {e}\n"
    text = output([accel, "stacks", str(launcher)])
    for pid in output(["pgrep", "-P", str(launcher)]).split():
        text += f"== pid {pid}, native (gdb) ==\n" + output(["gdb", "-p", pid, "-batch", "-ex", "thread apply all bt 30"])
    return text


def launch(accel, world, argv, env=None, precision="no", device="cpu", expect=0, timeout=600):
    """Runs `accel launch` with `world` processes of argv; returns its stdout and stderr together."""
    cmd = [accel, "launch", *(["--cpu"] if device == "cpu" else []), "--num_processes", str(world),
           "--main_process_port", "0", "--mixed_precision", precision, *[str(a) for a in argv]]
    job = subprocess.Popen(cmd, env={**ENV, **(env or {})}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = job.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stacks = where_ranks_are(accel, job.pid)
        job.kill()
        out, err = job.communicate()
        sys.exit(f"FAIL: {' '.join(cmd)} still ran after {timeout} s; where it was:\n{stacks}\n{out}\n{err}")
    if job.returncode != expect:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {job.returncode}, expected {expect}\n{out}\n{err}")
    return out + err
