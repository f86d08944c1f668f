# SPDX-License-Identifier: Apache-2.0
"""The Fashion-MNIST example end to end under `accel launch`: one epoch with 2 CPU processes
reaches at least 85 % test accuracy, writes TensorBoard and JSON-lines metrics, and a dataset
that is not there is exit 2 naming the package to install.
Usage: example_test.py ACCEL EXAMPLE"""
import json
import os
import re
import subprocess
import sys
import tempfile

ACCEL, EXAMPLE = sys.argv[1], sys.argv[2]

with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ, HF_HOME=tmp, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
    run = subprocess.run([ACCEL, "launch", "--cpu", "--num_processes", "2", "--main_process_port", "0", EXAMPLE,
                          "--cache_dir", f"{tmp}/cache", "--log_with", "all", "--project_dir", f"{tmp}/runs"],
                         env=env, capture_output=True, text=True, timeout=900)
    print(run.stdout[-2000:])
    assert run.returncode == 0, f"example exited {run.returncode}\n{run.stderr[-3000:]}"
    accuracy = float(re.search(r"test accuracy: ([0-9.]+) %", run.stdout).group(1))
    assert accuracy >= 85.0, f"test accuracy {accuracy} % after one epoch with 2 processes (< 85 %)"
    lines = [json.loads(line) for line in open(f"{tmp}/runs/fashion-mnist/metrics.jsonl")]
    assert "config" in lines[0] and lines[-1].get("test_accuracy", 0) * 100 >= 85.0, lines[-1]
    events = [f for f in os.listdir(f"{tmp}/runs/fashion-mnist") if f.startswith("events.out.tfevents.")]
    assert events, "no TensorBoard event file"
    print(f"ok: one epoch, 2 processes: {accuracy} % test accuracy; metrics.jsonl and {events[0]} written")

    run = subprocess.run([ACCEL, "launch", "--cpu", "--num_processes", "1", EXAMPLE, "--data_dir", f"{tmp}/none",
                          "--cache_dir", f"{tmp}/cache2"], env=env, capture_output=True, text=True, timeout=120)
    text = run.stdout + run.stderr
    assert run.returncode == 2 and "apt-get install dataset-fashion-mnist" in text, f"{run.returncode}\n{text}"
    print("ok: a missing dataset exits 2 naming dataset-fashion-mnist")
