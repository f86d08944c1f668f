#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# check_tensorboard.py - accel's TensorBoard event files (runtime/metrics/tensorboard_writer.h)
# read back by the real tensorboard package: tensorboard_worker logs "loss" and "lr" for steps
# 0..49 through Trackers("all") (a negative, a tiny, a subnormal and a large float32 among them);
# TensorBoard's record reader finds every length and CRC intact, its EventAccumulator finds
# file_version 2 and every scalar at its step with its value (float32 equality) and a wall time
# within the run, and metrics.jsonl starts with the config line, then the same steps. Run by
# scripts/peers in the peers' virtual environment (ACCEL: the binary; tensorboard_worker is
# built beside it). Exit 1 on a miss.
import glob
import json
import math
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.compat.proto import event_pb2
from tensorboard.compat.tensorflow_stub import errors, pywrap_tensorflow

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ACCEL = os.path.abspath(os.environ.get("ACCEL", os.path.join(ROOT, "build", "bin", "accel")))
WORKER = os.path.join(os.path.dirname(ACCEL), "tensorboard_worker")
STEPS = 50
SPECIAL_LOSS = {7: -3.25, 13: 1e-30, 29: 3.0e38, 31: 1e-40}  # negative, tiny, large, subnormal in float32


def expected():
    """{tag: [(step, value as a double)]}, the values the worker is given."""
    loss = [(s, SPECIAL_LOSS.get(s, 2.5 / (s + 1))) for s in range(STEPS)]
    lr = [(s, 1e-3 * (STEPS - s) / STEPS) for s in range(STEPS)]
    return {"loss": loss, "lr": lr}


def float32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def raw_records(path):
    """Every record through TensorBoard's own reader, which checks lengths and CRCs."""
    reader = pywrap_tensorflow.PyRecordReader_New(path)
    records = []
    while True:
        try:
            reader.GetNext()
        except errors.OutOfRangeError:
            return records
        records.append(event_pb2.Event.FromString(reader.record()))


def scalar_checks(acc, want, started, ended):
    checks = []
    for tag, points in want.items():
        got = [(e.step, e.value) for e in acc.Scalars(tag)] if tag in acc.Tags()["scalars"] else []
        wanted = [(step, float32(v)) for step, v in points]
        wrong = [f"step {s}: {v!r} (want {w!r})" for (s, v), (_, w) in zip(got, wanted) if v != w]
        checks.append((f"{tag}: {len(wanted)} scalars, each at its step with its float32 value "
                       f"(got {len(got)}; steps {[s for s, _ in got] if len(got) != len(wanted) else 'ok'}; "
                       f"wrong: {wrong[:5] or 'none'})",
                       [s for s, _ in got] == [s for s, _ in wanted] and not wrong))
        times = [e.wall_time for e in acc.Scalars(tag)] if got else []
        checks.append((f"{tag}: wall times within the run ({started:.3f}..{ended:.3f})",
                       bool(times) and all(started - 1 <= t <= ended + 1 for t in times)))
    return checks


def jsonl_checks(path, want):
    lines = []
    if os.path.exists(path):
        with open(path) as f:
            lines = [json.loads(line) for line in f]
    config_ok = bool(lines) and lines[0] == {"config": {"lr": 0.001, "model": "mlp"}}
    rows = lines[1:]
    values_ok = len(rows) == STEPS and all(
        row.get("step") == s and all(math.isclose(row.get(tag, math.nan), want[tag][s][1], rel_tol=1e-8)
                                     for tag in want) for s, row in enumerate(rows))
    return [(f"metrics.jsonl: the config line first (got {lines[:1]})", config_ok),
            (f"metrics.jsonl: {STEPS} steps with the logged values (got {len(rows)} lines)", values_ok)]


def record_checks(path):
    try:
        records = raw_records(path)
    except errors.DataLossError as e:
        return [(f"TensorBoard's record reader: {e.message}", False)]
    return [(f"TensorBoard's record reader: 1 + {2 * STEPS} records, CRCs intact, the first holding the file version "
             f"(got {len(records)})", len(records) == 1 + 2 * STEPS and records[0].file_version == "brain.Event:2")]


def run_checks(tmp, want):
    args = [f"{s}:{tag}={points[s][1]!r}" for s in range(STEPS) for tag, points in want.items()]
    started = time.time()
    worker = subprocess.run([WORKER, os.path.join(tmp, "logs"), "run", *args], capture_output=True, text=True,
                            timeout=120)
    ended = time.time()
    run_dir = os.path.join(tmp, "logs", "run")
    files = glob.glob(os.path.join(run_dir, "events.out.tfevents.*"))
    name = rf"events\.out\.tfevents\.\d+\.{re.escape(socket.gethostname())}"
    checks = [(f"tensorboard_worker exits 0 (got {worker.returncode}: {worker.stderr.strip()})",
               worker.returncode == 0),
              (f"one event file events.out.tfevents.<seconds>.<hostname> in logs/run (got {files})",
               len(files) == 1 and bool(re.fullmatch(name, os.path.basename(files[0]))))]
    if len(files) != 1:
        return checks
    acc = EventAccumulator(run_dir)
    acc.Reload()
    checks += record_checks(files[0])
    checks.append((f"EventAccumulator: file_version 2 (got {acc.file_version})", acc.file_version == 2.0))
    checks += scalar_checks(acc, want, started, ended)
    return checks + jsonl_checks(os.path.join(run_dir, "metrics.jsonl"), want)


def main():
    if not os.path.exists(WORKER):
        print(f"FAIL {WORKER} is missing: build the tensorboard_worker target beside {ACCEL}")
        return 1
    tmp = tempfile.mkdtemp(prefix="accel-peers-tensorboard-")
    checks = run_checks(tmp, expected())
    shutil.rmtree(tmp, ignore_errors=True)
    for what, ok in checks:
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
    print(f"tensorboard event files: {sum(ok for _, ok in checks)} of {len(checks)} checks passed")
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
