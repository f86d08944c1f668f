# SPDX-License-Identifier: Apache-2.0
"""The libtorch component against PyTorch (Debian's torch 1.13, the same libtorch) and its
refusals: DistributedSampler's indices, clip_grad_norm_, StepLR under Accelerate's scheduler
rule, gatherForMetrics without the padding, unused parameters found or refused, modules that
differ between ranks, backward twice, a model on another device, fp16 on CPU, and overlap of the
all-reduce with backward. Usage: checks_test.py ACCEL CHECKS_WORKER"""
import subprocess
import sys
import tempfile

import torch
from torch.utils.data.distributed import DistributedSampler

import torch_launch

ACCEL, WORKER = sys.argv[1], sys.argv[2]


def launch(world, *args, precision="no", expect=0):
    return torch_launch.launch(ACCEL, world, [WORKER, *args], precision=precision, expect=expect, timeout=300)


def payload(text, tag):
    """The worker's lines starting with `tag`, without the launcher's rank prefix."""
    out = []
    for line in text.splitlines():
        body = line.split("] ", 1)[1] if line.startswith("[rank") else line
        if body.startswith(tag + " "):
            out.append(body[len(tag) + 1:])
    return out


def check_sampler():
    for n in (10, 13, 64):
        for world in (1, 2, 3, 4):
            for shuffle in (0, 1):
                for drop in (0, 1):
                    run = subprocess.run([WORKER, "sampler"] + [str(v) for v in (n, world, shuffle, drop)], capture_output=True,
                                         text=True, check=True)
                    for line in run.stdout.splitlines():
                        epoch, rank, *got = (int(v) for v in line.split())
                        s = DistributedSampler(range(n), num_replicas=world, rank=rank, shuffle=bool(shuffle),
                                               seed=1234, drop_last=bool(drop))
                        s.set_epoch(epoch)
                        assert got == list(s), f"sampler n={n} world={world} rank={rank} epoch={epoch}: {got}"
    print("ok: sampler: the indices of DistributedSampler for 3 epochs, world 1-4, shuffle and drop_last")


def check_clip():
    for max_norm, norm_type in ((0.5, 2.0), (0.05, 1.0), (1e9, 2.0)):
        text = launch(1, "clip", max_norm, norm_type)
        grads = [torch.tensor([float(v) for v in g.split()]) for g in payload(text, "before")]
        params = [torch.zeros_like(g, requires_grad=True) for g in grads]
        for p, g in zip(params, grads):
            p.grad = g.clone()
        norm = torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type)
        after = [torch.tensor([float(v) for v in g.split()]) for g in payload(text, "after")]
        for p, a in zip(params, after):
            assert torch.equal(p.grad, a), f"clip {max_norm} {norm_type}: gradients differ from clip_grad_norm_'s"
        assert float(payload(text, "norm")[0]) == norm.item(), f"clip: norm {payload(text, 'norm')} vs {norm.item()}"
    print("ok: clipGradNorm: the gradients and norm of torch.nn.utils.clip_grad_norm_ (2-norm, 1-norm, no clip)")


def check_partial_clip():
    text = launch(1, "partial_clip")
    lines = payload(text, "clip")
    assert [line.split()[0] for line in lines] == ["0", "0", "1"], lines
    assert [float(line.split()[1]) for line in lines[:2]] == [0.0, 0.0], lines
    assert float(lines[2].split()[1]) > 0, lines
    assert text.count("clipGradNorm inside an accumulation window does nothing") == 1, text
    print("ok: clipGradNorm inside an accumulation window does nothing and says so once; at its end it clips")


def check_steplr():
    for world in (1, 2):
        got = [float(v) for v in payload(launch(world, "steplr", 8), "lr")[:8]]
        p = torch.zeros(1, requires_grad=True)
        opt = torch.optim.SGD([p], lr=0.1)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
        want = []
        for _ in range(8):
            opt.step()
            for _ in range(world):  # Accelerate steps the scheduler once per process
                sched.step()
            want.append(opt.param_groups[0]["lr"])
        assert got == want, f"StepLR at world {world}: {got} vs PyTorch's {want}"
    print("ok: StepLR: PyTorch's learning rates, stepped once per process per optimizer step (Accelerate's rule)")


def check_gather():
    got = [int(v) for v in payload(launch(4, "gather", 10, 2), "gathered")[0].split()]
    assert sorted(got) == list(range(10)), f"gatherForMetrics of 10 samples on 4 ranks: {got}"
    print(f"ok: gatherForMetrics: 10 samples on 4 ranks give the 10, once each ({got})")


def check_unused():
    text = launch(2, "unused", 1)
    lines = [line.split("] ", 1)[-1] for line in text.splitlines()]
    assert "unused.weight none" in lines and "a.weight grad" in lines, f"find_unused_parameters: {lines}"
    text = launch(2, "unused", 0, expect=1)
    assert "'unused.weight'" in text and "'unused.bias'" in text and "find_unused_parameters" in text, text
    print("ok: unused parameters: found (their gradients untouched) or refused naming them")


def check_refusals():
    text = launch(2, "mismatch", expect=1)
    assert "parameter 'a.weight' has shape [16, 8]" in text and "[32, 8]" in text and "rank 1" in text, text
    text = launch(1, "twice", expect=1)
    assert "backward() was called again" in text, text
    text = launch(1, "device", expect=1)
    assert "parameter 'w' is on meta but the Accelerator's device is cpu" in text, text
    if torch.__version__.startswith("1."):
        text = launch(1, "clip", 1, 2, precision="fp16", expect=2)
        assert "mixed precision fp16 on CPU" in text and "bf16" in text, text
    print("ok: refusals: shapes differing between ranks, backward twice, another device, fp16 on CPU")


def check_overlap():
    text = launch(2, "overlap")
    buckets, launched = (int(v) for v in payload(text, "buckets")[0].split()[::2])
    assert buckets >= 2 and launched >= 1, f"overlap: {buckets} buckets, {launched} launched before backward ended"
    print(f"ok: overlap: {launched} of {buckets} buckets' all-reduce started before backward's last gradient")


def check_reload():
    with tempfile.TemporaryDirectory() as tmp:
        got = payload(launch(2, "reload", tmp), "reductions")
    assert got == ["1", "1"], f"after torch::load into the wrapped model, reductions {got}, expected 1 on each rank"
    print("ok: torch::load into a wrapped model (new gradient accumulators): its gradients are still reduced")


def accelerate_windows(batches, steps, epochs):
    """Accelerate 1.15's Accelerator._do_sync, micro-step by micro-step: at the dataloader's end
    (GradientState.end_of_dataloader) the step count restarts at 0 and gradients sync; else the
    count goes on and they sync every `steps`."""
    out, step = [], 0
    for _ in range(epochs):
        line = ""
        for b in range(batches):
            if b == batches - 1:
                step, sync = 0, True
            else:
                step += 1
                sync = step % steps == 0
            line += "1" if sync else "0"
        out.append(line)
    return out


def check_windows():
    for n, batch, steps in ((6, 2, 2), (10, 2, 3), (8, 2, 4), (7, 3, 2)):
        batches = -(-n // batch)
        for world in (1, 2):
            got = payload(launch(world, "windows", n * world, batch, steps, 3), "windows")
            want = accelerate_windows(batches, steps, 3)
            assert got == want, f"windows of {batches} batches, {steps} steps, world {world}: {got}, Accelerate: {want}"
    print("ok: windows: accumulation windows end at each epoch's end and restart, as Accelerate's _do_sync (3 batches, "
          "2 steps: 011 011 011)")


def check_loader_resume():
    # (world, saved world, saved position) -> (position, the next sample's global list position)
    cases = {(4, 2, 8): (4, 16), (2, 4, 3): (6, 12), (2, 3, 5): (7, 14), (3, 3, 5): (5, 15)}
    for (world, saved, at), want in cases.items():
        run = subprocess.run([WORKER, "loader_resume", "48", str(world), str(saved), str(at)], capture_output=True,
                             text=True, check=True)
        got = tuple(int(v) for v in run.stdout.split()[1::2])
        assert got == want, f"loader of {world} ranks from a state of {saved} at {at}: {got}, expected {want}"
    print("ok: loader_resume: a loader state of N ranks resumes at the same global sample on M (a partial step again)")


for check in (check_windows, check_partial_clip, check_loader_resume, check_reload, check_sampler, check_clip, check_steplr, check_gather, check_unused, check_refusals, check_overlap):
    check()
