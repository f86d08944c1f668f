# SPDX-License-Identifier: Apache-2.0
"""The PyTorch side of scripts/bench_torch: apps/fashion_mnist/bench_torch.cc's program written
with torch.nn.parallel.DistributedDataParallel over Gloo, for the same libtorch (Debian's
python3-torch 1.13 is built from the sources of its libtorch-dev).

Same models (FashionCnn's exact layers from apps/fashion_mnist/cnn.h; the wide MLP), same data
(one batch of 64 random samples per rank), same step (forward, cross-entropy, backward, SGD with
momentum, zero_grad), one compute thread per process, same modes and step plan: ddp (every step
synchronises), nosync (every step under model.no_sync()), alternate (blocks of BLOCK of each,
each block's first step untimed), single (one process, no launcher, no DDP); the others run
under `accel launch` (torchrun's environment). Rank 0 prints the C++ side's lines:
  bench_torch impl=torch model=M mode=ddp|nosync|single world=W steps=N median_ms=… mean_ms=…
    min_ms=… cpu_ms=… grad_mb=… comm_s=… exposed_s=…
cpu_ms: the median of the process's CPU time (every thread) per step.
comm_s / exposed_s: DDP's own timings (its logger, told to sample every step), summed over the
timed synchronising steps, the mean over ranks: the time from the first bucket's all-reduce
launch to every bucket waited for and copied back, and its part after backward's computation
ended; 1 - exposed/comm is the share hidden behind backward. DDP records a backward's timings
at the next synchronising forward, so the sum covers each timed step's predecessor.
Usage: bench_torch.py cnn|mlp ddp|nosync|alternate|single STEPS [WARMUP (5)] [MLP_WIDTH (512)]
  STEPS: timed steps of each kind."""
import contextlib
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

BATCH = 64
MLP_INPUTS = 1024
BLOCK = 5
LEARNING_RATE = 0.01


class FashionCnn(torch.nn.Module):
    """apps/fashion_mnist/cnn.h: conv(1->16)-BN-ReLU-pool, conv(16->32)-BN-ReLU-pool, fc 64, fc 10."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 16, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(16)
        self.conv2 = torch.nn.Conv2d(16, 32, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(32)
        self.fc1 = torch.nn.Linear(32 * 7 * 7, 64)
        self.fc2 = torch.nn.Linear(64, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


class WideMlp(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc1 = torch.nn.Linear(MLP_INPUTS, width)
        self.fc2 = torch.nn.Linear(width, width)
        self.fc3 = torch.nn.Linear(width, 10)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def make_batch(model, rank):
    torch.manual_seed(1000 + rank)
    x = torch.randn(BATCH, 1, 28, 28) if model == "cnn" else torch.randn(BATCH, MLP_INPUTS)
    return x, torch.randint(0, 10, (BATCH,))


def plan(mode, steps):
    """[(sync, timed)] after warm-up: bench_torch.cc's plan() (which says why a block's first
    step is not timed) without its barrier steps, which measure the machine, not a DDP."""
    if mode != "alternate":
        return [(mode != "nosync", True)] * steps
    out = []
    for _ in range(0, steps, BLOCK - 1):
        for sync in (True, False):
            out += [(sync, i > 0) for i in range(BLOCK)]
    return out


class DdpCommTimes:
    """Sums DDP's latest per-step figures (nanoseconds) after each timed synchronising step."""

    def __init__(self, model):
        self.model, self.comm, self.overlap = model, 0, 0

    def add(self):
        data = self.model._get_ddp_logging_data()
        self.comm += data.get("backward_comm_time", 0)
        self.overlap += data.get("backward_compute_comm_overlap_time", 0)

    def seconds(self):
        """(communication, exposed)."""
        return self.comm / 1e9, (self.comm - self.overlap) / 1e9


def measure(mode, steps, warmup, step, started, times):
    """Wall and CPU milliseconds of each timed step, as {sync: [ms]}."""
    for _ in range(warmup):
        step(mode != "nosync")
    started()
    ms, cpu = {True: [], False: []}, {True: [], False: []}
    for sync, timed in plan(mode, steps):
        c0, t0 = time.process_time(), time.perf_counter()
        step(sync)
        took, cpu_took = (time.perf_counter() - t0) * 1e3, (time.process_time() - c0) * 1e3
        if timed:
            ms[sync].append(took)
            cpu[sync].append(cpu_took)
            if sync and times:
                times.add()
    return ms, cpu


def report(model_name, mode, world, ms, cpu, grad_mb, comm):
    for sync, label in ((True, "single" if mode == "single" else "ddp"), (False, "nosync")):
        xs = ms[sync]
        if not xs:
            continue
        c, e = comm if sync else (0.0, 0.0)
        print(f"bench_torch impl=torch model={model_name} mode={label} world={world} steps={len(xs)} "
              f"median_ms={statistics.median(xs):.3f} mean_ms={statistics.mean(xs):.3f} min_ms={min(xs):.3f} "
              f"cpu_ms={statistics.median(cpu[sync]):.3f} grad_mb={grad_mb:.2f} comm_s={c:.6f} exposed_s={e:.6f}",
              flush=True)


def main():
    usage = "usage: bench_torch.py cnn|mlp ddp|nosync|alternate|single STEPS [WARMUP (5)] [MLP_WIDTH (512)]"
    modes = ("ddp", "nosync", "alternate", "single")
    if len(sys.argv) < 4 or sys.argv[1] not in ("cnn", "mlp") or sys.argv[2] not in modes:
        print(usage, file=sys.stderr)
        return 2
    model_name, mode, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    warmup = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    width = int(sys.argv[5]) if len(sys.argv) > 5 else 512
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    torch.manual_seed(0)
    net = FashionCnn() if model_name == "cnn" else WideMlp(width)
    rank, world, model = 0, 1, net
    if mode != "single":
        dist.init_process_group("gloo")
        rank, world = dist.get_rank(), dist.get_world_size()
        model = DistributedDataParallel(net)
        model._set_ddp_runtime_logging_sample_rate(1)  # DDP's timers on every step, not every 100th
    x, y = make_batch(model_name, rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE, momentum=0.9)

    def step(sync):
        with contextlib.nullcontext() if sync or mode == "single" else model.no_sync():
            F.cross_entropy(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()

    def started():
        if mode != "single":
            dist.barrier()  # every rank's timed steps start together

    times = DdpCommTimes(model) if mode in ("ddp", "alternate") else None
    ms, cpu = measure(mode, steps, warmup, step, started, times)
    comm = times.seconds() if times else (0.0, 0.0)
    if mode != "single":
        totals = torch.tensor(comm, dtype=torch.float64)
        dist.all_reduce(totals)
        comm = (totals / world).tolist()
    if rank == 0:
        grad_mb = sum(p.numel() * p.element_size() for p in net.parameters()) / (1 << 20)
        report(model_name, mode, world, ms, cpu, grad_mb, comm)
    if mode != "single":
        # No teardown: torch 1.13 can deadlock destroying DDP's reducer and its Gloo group (the
        # main thread joins a Gloo thread that waits for the GIL), and the store's host then
        # spins on its peers' closed sockets. Every rank is done once all have reached here.
        dist.barrier()
        sys.stdout.flush()
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
