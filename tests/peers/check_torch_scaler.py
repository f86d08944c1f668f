#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# check_torch_scaler.py - the libtorch component's loss scaler (TorchAccelerator under
# --mixed_precision fp16, runtime/amp/loss_scaler.h) against torch 2's
# torch.amp.GradScaler("cpu"): checks_worker's `scaler` mode trains a small model for STEPS steps
# with init_scale 2^10 and growth_interval 3, inf, -inf or NaN written into one gradient after
# backward at some steps; the same model, data and injections go through GradScaler here. The
# scale before each step and the skipped steps must be GradScaler's exactly, a skipped step must
# leave the parameters bit for bit as they were, and the parameters' sum must follow PyTorch's
# (to 1e-5: the two libtorch versions' kernels may round differently). At world 2 the
# injections fall on one rank at a time, so both ranks must skip what either found; both ranks
# print the same lines. Run by scripts/peers in the peers' virtual environment (ACCEL: the
# binary; checks_worker is built beside it where the build found Torch, or CHECKS_WORKER names
# it). Exit 1 on a miss; 0 with "skipped:" when the build has no torch component.
import os
import re
import subprocess
import sys
import tempfile

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ACCEL = os.path.abspath(os.environ.get("ACCEL", os.path.join(ROOT, "build", "bin", "accel")))
WORKER = os.environ.get("CHECKS_WORKER", os.path.join(os.path.dirname(ACCEL), "checks_worker"))
STEPS, INIT_SCALE, GROWTH_INTERVAL, LR = 40, 2.0**10, 3, 0.05
# step: (kind, rank at world 2). Runs of one, two and three bad steps, clean runs long enough
# to grow the scale, each kind on each rank.
INJECT = {4: ("inf", 0), 5: ("nan", 1), 11: ("-inf", "*"), 16: ("nan", 1), 17: ("inf", 0), 18: ("nan", "*"),
          25: ("inf", 1), 33: ("nan", 0), 34: ("-inf", 1)}
VALUE = {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan")}
LINE = re.compile(r"step (\d+) scale (\S+) skipped ([01]) checksum (\S+)$")


def torch_built():
    """Whether the build beside ACCEL found Torch (its CMake cache names a Torch_DIR)."""
    cache = os.path.join(os.path.dirname(os.path.dirname(ACCEL)), "CMakeCache.txt")
    if not os.path.exists(cache):
        return True  # not a build tree: a missing worker is a failure
    with open(cache) as f:
        return any(line.startswith("Torch_DIR:") and not line.rstrip().endswith("NOTFOUND") for line in f)


def run_worker(world):
    specs = [f"{s}:{kind}:{rank if world > 1 else 0}" for s, (kind, rank) in sorted(INJECT.items())]
    cmd = [ACCEL, "launch", "--cpu", "--num_processes", str(world), "--main_process_port", "0",
           "--mixed_precision", "fp16", WORKER, "scaler", str(STEPS), repr(INIT_SCALE), str(GROWTH_INTERVAL), *specs]
    env = dict(os.environ, HF_HOME=tempfile.mkdtemp(prefix="accel-peers-scaler-"), GLOO_SOCKET_IFNAME="lo",
               OMP_NUM_THREADS="1")
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        sys.exit(f"FAIL {' '.join(cmd)} exited {run.returncode}\n{run.stdout}\n{run.stderr}")
    ranks = {}
    for line in run.stdout.splitlines():
        m = re.match(r"\[rank ?(\d+)\] (.*)$", line)
        rank, body = (int(m.group(1)), m.group(2)) if m else (0, line)
        ranks.setdefault(rank, []).append(body.strip())
    return ranks


def parse(lines):
    init, data, steps = {}, {}, []
    for line in lines:
        head, _, rest = line.partition(" ")
        if head == "init":
            name, values = rest.split(" ", 1)
            init[name] = torch.tensor([float(v) for v in values.split()])
        elif head in ("x", "y"):
            data[head] = torch.tensor([float(v) for v in rest.split()])
        elif LINE.match(line):
            s, scale, skipped, checksum = LINE.match(line).groups()
            steps.append((int(s), float(scale), skipped == "1", float(checksum)))
    return init, data, steps


class TwoLayer(torch.nn.Module):  # checks_worker's TwoLayer
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(8, 16), torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def reference(init, data):
    """[(step, scale before it, skipped, sum of the parameters after it)] with GradScaler("cpu")."""
    model = TwoLayer()
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(init[name].view_as(p))
    x, y = data["x"].view(16, 8), data["y"].view(16, 4)
    params = list(model.parameters())
    opt = torch.optim.SGD(params, lr=LR)
    scaler = torch.amp.GradScaler("cpu", init_scale=INIT_SCALE, growth_interval=GROWTH_INTERVAL)
    out = []
    for step in range(STEPS):
        opt.zero_grad()
        scaler.scale(torch.nn.functional.mse_loss(model(x), y)).backward()
        if step in INJECT:
            with torch.no_grad():
                params[step % len(params)].grad.view(-1)[0] = VALUE[INJECT[step][0]]
        scale = scaler.get_scale()
        before = [p.detach().clone() for p in params]
        scaler.step(opt)
        scaler.update()
        skipped = all(torch.equal(b, p) for b, p in zip(before, params))
        out.append((step, scale, skipped, sum(p.detach().double().sum().item() for p in params)))
    return out


def compare(world, got, want):
    checks = [(f"world {world}: {STEPS} steps printed (got {len(got)})", len(got) == STEPS)]
    scales = [s for _, s, _, _ in got], [s for _, s, _, _ in want]
    first = next((i for i, (a, b) in enumerate(zip(*scales)) if a != b), None)
    shown = (f"{len(set(scales[1]))} values from {min(scales[1])} to {max(scales[1])}" if scales[0] == scales[1] else
             f"first differs at step {first}: accel {scales[0]}, GradScaler {scales[1]}")
    checks.append((f"world {world}: the scale before each step is GradScaler's ({shown})", scales[0] == scales[1]))
    skipped = [s for s, _, k, _ in got if k], [s for s, _, k, _ in want if k]
    checks.append((f"world {world}: the skipped steps are GradScaler's (accel {skipped[0]}, GradScaler {skipped[1]}; "
                   f"injected at {sorted(INJECT)})", skipped[0] == skipped[1] == sorted(INJECT)))
    unmoved = all(got[i][3] == got[i - 1][3] for i in range(1, len(got)) if got[i][2])
    checks.append((f"world {world}: a skipped step leaves the parameters' sum bit for bit", unmoved))
    off = max((abs(g[3] - w[3]) for g, w in zip(got, want)), default=float("inf"))
    checks.append((f"world {world}: the parameters' sum follows PyTorch's (largest difference {off:.3g}, "
                   f"at most 1e-5)", off <= 1e-5))
    return checks


def main():
    if not os.path.exists(WORKER):
        if not torch_built():
            print(f"skipped: {os.path.dirname(os.path.dirname(ACCEL))} has no torch component (CMake found no Torch)")
            return 0
        print(f"FAIL {WORKER} is missing: build the checks_worker target beside {ACCEL}")
        return 1
    checks = []
    for world in (1, 2):
        ranks = run_worker(world)
        init, data, got = parse(ranks.get(0, []))
        want = reference(init, data)
        checks += compare(world, got, want)
        if world > 1:
            same = all(ranks.get(r) == ranks.get(0) for r in range(world))
            checks.append((f"world {world}: every rank printed the same parameters, scales and skips", same))
    for what, ok in checks:
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
    print(f"loss scaler against torch {torch.__version__}'s GradScaler(\"cpu\"): "
          f"{sum(ok for _, ok in checks)} of {len(checks)} checks passed")
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
