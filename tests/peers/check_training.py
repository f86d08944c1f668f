#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# check_training.py - a real Accelerate training script (accelerate_train.py: prepare,
# accumulate, autocast, gather_for_metrics, save_state / load_state) under
# `accel launch --cpu --num_processes 2` ends where the same script run as one process ends:
# evaluation loss within 1e-5 relative after 50 steps in fp32, 1e-2 in bf16;
# and 30 steps + save_state, then a new launch that load_states and runs to 50, ends where the
# uninterrupted two-process run ends (1e-6). Also: `accelerate launch --cpu
# --num_processes 2` without mpirun starts ONE process, `accel launch` two.
# Run by scripts/peers in the peers' virtual environment (ACCEL: the accel binary). Exit 1 on a miss.
import json
import os
import shutil
import sys
import tempfile

import process_group

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ACCEL = os.path.abspath(os.environ.get("ACCEL", os.path.join(ROOT, "build", "bin", "accel")))
SCRIPT = os.path.join(ROOT, "tests", "peers", "accelerate_train.py")
PROBE = os.path.join(ROOT, "tests", "peers", "probe_worker.py")


def env(tmp):
    return {**os.environ, "HF_HOME": os.path.join(tmp, "hf"), "ACCEL_PYTHON": sys.executable, "PYTHONWARNINGS": "ignore"}


def run(tmp, name, launcher, *script_args):
    out = os.path.join(tmp, name + ".json")
    command = [*launcher, SCRIPT, "--out", out, *script_args]
    code, stdout, stderr = process_group.run(command, 600, env=env(tmp))
    if code != 0:
        print(f"FAIL {name}: {' '.join(command)} exited {code}\n{stdout[-3000:]}{stderr[-3000:]}")
        return None
    with open(out) as f:
        return json.load(f)


def compare(name, got, want, tolerance, problems):
    if got is None or want is None:
        problems.append(name)
        return
    relative = abs(got["eval_loss"] - want["eval_loss"]) / abs(want["eval_loss"])
    ok = relative <= tolerance and got["step"] == want["step"]
    print(f"{'ok  ' if ok else 'FAIL'} {name}: eval loss {got['eval_loss']:.9f} vs {want['eval_loss']:.9f}, "
          f"relative difference {relative:.2e} (limit {tolerance:g}); steps {got['step']} vs {want['step']}; "
          f"{got['processes']} vs {want['processes']} process(es), {got['distributed_type']}")
    if not ok:
        problems.append(name)


def processes_started(tmp, launcher):
    """How many workers a launcher starts for `--cpu --num_processes 2` (probe files written)."""
    out = tempfile.mkdtemp(dir=tmp)
    process_group.run([*launcher, "--cpu", "--num_processes", "2", PROBE, out], 300, env=env(tmp))
    return sum(name.startswith("env-") for name in os.listdir(out))


def main():
    tmp = tempfile.mkdtemp(prefix="accel-peers-training-")
    alone = [sys.executable]
    accel2 = [ACCEL, "launch", "--cpu", "--num_processes", "2"]
    problems = []
    one = run(tmp, "one process fp32", alone)
    two = run(tmp, "accel launch 2 processes fp32", accel2)
    compare("2 processes vs 1, fp32, 50 steps", two, one, 1e-5, problems)
    one_bf16 = run(tmp, "one process bf16", alone, "--mixed_precision", "bf16")
    two_bf16 = run(tmp, "accel launch 2 processes bf16", accel2, "--mixed_precision", "bf16")
    compare("2 processes vs 1, bf16, 50 steps", two_bf16, one_bf16, 1e-2, problems)
    state = os.path.join(tmp, "state")
    first = run(tmp, "accel launch 2 processes, 30 steps, save_state", accel2, "--stop_at", "30", "--save", state)
    if first is None or first["step"] != 30:
        problems.append("save_state at step 30")
    resumed = run(tmp, "accel launch 2 processes, load_state, to 50", accel2, "--resume", state)
    compare("resumed from save_state at 30 vs uninterrupted, fp32", resumed, two, 1e-6, problems)

    theirs = processes_started(tmp, [os.path.join(os.path.dirname(sys.executable), "accelerate"), "launch"])
    ours = processes_started(tmp, [ACCEL, "launch"])
    ok = theirs == 1 and ours == 2
    print(f"{'ok  ' if ok else 'FAIL'} --cpu --num_processes 2 without mpirun: accelerate launch started {theirs} "
          f"process(es), accel launch {ours} (docs/launch.md: 'Several CPU processes without MPI')")
    if not ok:
        problems.append("multi-CPU without MPI")
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"training parity: {'every check passed' if not problems else 'FAILED: ' + ', '.join(problems)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
