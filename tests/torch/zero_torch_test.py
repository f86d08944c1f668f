# SPDX-License-Identifier: Apache-2.0
"""The component's ZeRO stages against PyTorch's own sharded training, the same model, data,
initial weights and steps (zero_worker.cc under `accel launch`, zero_torch.py under `accel
torchrun`, both on CPU over Gloo): stage 1 against DDP with ZeroRedundancyOptimizer, stage 2
against fully_shard(reshard_after_forward=False), stage 3 against fully_shard, each Block a unit.
Run with the torch the component was built against (scripts/torch2_smoke: the peers' torch 2),
so that both sides run the same kernels.

With SGD at world 2 the weights must be bit-identical, accumulation and clipping included: each
gradient is (g0 + g1) / 2 on both sides (PyTorch divides after the sum, the component multiplies
by 1/2 before; both exact), and stages 2-3 take each parameter's norm from its shards as DTensor
does (each rank's norm to the power p, summed, to the power 1/p). Within 1e-6 relative otherwise,
for two reasons: at world 4 the order of the four-way sum is each collective's own; libtorch's
AdamW updates its moments with mul_ and add_ where Python's uses lerp_ (DDP against DDP differs
the same way). Each case says which it was.

Usage: zero_torch_test.py ACCEL ZERO_WORKER [all]   (default: a pairwise subset of stages x
worlds x optimizers x {accumulate(2), clipping}; `all` the whole matrix, for scripts/bench_zero)"""
import itertools
import os
import subprocess
import sys
import tempfile

import torch

import torch_launch

ACCEL, WORKER = sys.argv[1], sys.argv[2]
FULL = len(sys.argv) > 3 and sys.argv[3] == "all"
HERE = os.path.dirname(os.path.abspath(__file__))
TMP = tempfile.mkdtemp(prefix="zero_torch.")
KINDS = {1: "zero1", 2: "fsdp2", 3: "fsdp3"}
STEPS = 50


def sh(cmd):
    job = subprocess.run([str(c) for c in cmd], env=torch_launch.ENV, capture_output=True, text=True, timeout=900)
    if job.returncode != 0:
        sys.exit(f"FAIL: {' '.join(map(str, cmd))} exited {job.returncode}\n{job.stdout}\n{job.stderr}")


def case(stage, world, optimizer, accumulate, clip):
    name = f"s{stage}-w{world}-{optimizer}-acc{accumulate}-clip{clip}"
    ours, theirs = os.path.join(TMP, name, "accel"), os.path.join(TMP, name, "torch")
    os.makedirs(ours)
    flags = ["--use_deepspeed", "--zero_stage", stage, "--gradient_accumulation_steps", accumulate]
    sh([ACCEL, "launch", "--num_processes", world, "--main_process_port", "0", *flags, WORKER, ours, STEPS, optimizer,
        "--clip", clip])
    sh([ACCEL, "torchrun", "--nproc_per_node", world, "--master_port", "0", sys.executable,
        os.path.join(HERE, "zero_torch.py"), KINDS[stage], ours, theirs, STEPS, optimizer, "--accumulate", accumulate,
        "--clip", clip])
    a = torch.load(os.path.join(ours, "final-rank0.pt"), weights_only=False)
    b = torch.load(os.path.join(theirs, "torch-final.pt"))
    if all(torch.equal(a[k], b[k]) for k in b):
        return name, 0.0
    return name, max(((a[k] - b[k]).abs().max() / b[k].abs().max()).item() for k in b)


def matrix():
    every = list(itertools.product((1, 2, 3), (2, 4), ("sgd", "adamw"), (1, 2), (0, 1.0)))
    if FULL:
        return every
    # Pairwise in six cases: every stage at both worlds, its world-4 case the complement of its
    # world-2 case in optimizer, accumulation and clipping, so that every pair of values of any two
    # factors appears in some case.
    return [(1, 2, "sgd", 1, 0), (1, 4, "adamw", 2, 1.0), (2, 2, "adamw", 2, 0), (2, 4, "sgd", 1, 1.0),
            (3, 2, "sgd", 2, 1.0), (3, 4, "adamw", 1, 0)]


if __name__ == "__main__":
    said = []
    for stage, world, optimizer, accumulate, clip in matrix():
        name, worst = case(stage, world, optimizer, accumulate, clip)
        print(f"  {name}: {'bit-identical' if worst == 0 else f'{worst:.1e} relative'}", flush=True)
        if world == 2 and optimizer == "sgd":
            assert worst == 0, f"{name}: not bit-identical to PyTorch's ({worst:.3g} relative)"
        assert worst <= 1e-6, f"{name}: {worst:.3g} relative from PyTorch's, more than 1e-6"
        said.append(name)
    print(f"ok: ZeRO against PyTorch {torch.__version__} (ZeroRedundancyOptimizer, fully_shard), {len(said)} cases of "
          f"{STEPS} steps, SGD at world 2 bit-identical, the rest within 1e-6")
