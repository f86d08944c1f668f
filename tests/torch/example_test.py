# SPDX-License-Identifier: Apache-2.0
"""The Fashion-MNIST example end to end under `accel launch`: one epoch with 2 CPU processes
reaches at least 85 % test accuracy, writes TensorBoard and JSON-lines metrics, and a dataset
that is not there is exit 2 naming the package to install.
Usage: example_test.py ACCEL EXAMPLE"""
import json
import os
import re
import sys
import tempfile

import torch_launch

ACCEL, EXAMPLE = sys.argv[1], sys.argv[2]

with tempfile.TemporaryDirectory() as tmp:
    out = torch_launch.launch(ACCEL, 2, [EXAMPLE, "--cache_dir", f"{tmp}/cache", "--log_with", "all",
                                         "--project_dir", f"{tmp}/runs"], timeout=900)
    print(out[-2000:])
    accuracy = float(re.search(r"test accuracy: ([0-9.]+) %", out).group(1))
    assert accuracy >= 85.0, f"test accuracy {accuracy} % after one epoch with 2 processes (< 85 %)"
    lines = [json.loads(line) for line in open(f"{tmp}/runs/fashion-mnist/metrics.jsonl")]
    assert "config" in lines[0] and lines[-1].get("test_accuracy", 0) * 100 >= 85.0, lines[-1]
    events = [f for f in os.listdir(f"{tmp}/runs/fashion-mnist") if f.startswith("events.out.tfevents.")]
    assert events, "no TensorBoard event file"
    print(f"ok: one epoch, 2 processes: {accuracy} % test accuracy; metrics.jsonl and {events[0]} written")

    text = torch_launch.launch(ACCEL, 1, [EXAMPLE, "--data_dir", f"{tmp}/none", "--cache_dir", f"{tmp}/cache2"],
                               expect=2, timeout=120)
    assert "apt-get install dataset-fashion-mnist" in text, text
    print("ok: a missing dataset exits 2 naming dataset-fashion-mnist")
