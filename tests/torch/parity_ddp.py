# SPDX-License-Identifier: Apache-2.0
"""The Python side of the parity tests: the run parity_worker.cc made, repeated with PyTorch's own
DistributedDataParallel over Gloo, under `accel launch` (torchrun's environment).

Reads data.pt and init.pt that the C++ side wrote, trains ParityNet (parity_net.h's twin) with
DistributedSampler(seed=1234, shuffle), SGD with momentum, and Accelerate's accumulation rule
(sync every N micro-steps and at an epoch's last batch, loss / N, no_sync() otherwise), and
writes py-final-rank<r>.pt, py-losses-rank<r>.txt, py-accuracy-rank<r>.txt.
On a CUDA device (DEVICE cuda): NCCL, cuDNN deterministic with benchmark off, and under fp16
autocast with torch.amp.GradScaler as Accelerate drives it (scale the loss, step through the
scaler, update).
Usage: parity_ddp.py OUT_DIR STEPS ACCUMULATION [PRECISION (no, bf16, fp16) [DEVICE (cpu, cuda)]]"""
import contextlib
import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data.distributed import DistributedSampler

BATCH = 8


class ParityNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.fc1 = torch.nn.Linear(4 * 8 * 8, 32)
        self.fc2 = torch.nn.Linear(32, 10)

    def forward(self, x):
        h = torch.relu(self.bn(self.conv(x))).flatten(1)
        return self.fc2(torch.relu(self.fc1(h)))


def main():
    out, steps, accumulation = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    precision = sys.argv[4] if len(sys.argv) > 4 else "no"
    device = torch.device(sys.argv[5] if len(sys.argv) > 5 else "cpu")
    if device.type == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(device)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    if "RANK" not in os.environ:  # a launch of one process sets no rendezvous, as Accelerate's
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            os.environ.update(RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(s.getsockname()[1]))
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    rank = dist.get_rank()
    data = {k: v.to(device) for k, v in torch.load(os.path.join(out, "data.pt")).items()}
    net = ParityNet().to(device)
    net.load_state_dict(torch.load(os.path.join(out, "init.pt")))
    model = DistributedDataParallel(net, device_ids=[device.index] if device.type == "cuda" else None)
    fp16 = precision == "fp16"
    scaler = torch.amp.GradScaler("cuda", enabled=fp16) if hasattr(torch.amp, "GradScaler") else \
        torch.cuda.amp.GradScaler(enabled=fp16)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    sampler = DistributedSampler(range(len(data["x"])), shuffle=True, seed=1234)
    losses, step, micro, epoch = [], 0, 0, 0
    while step < steps:
        sampler.set_epoch(epoch)
        order = list(sampler)
        batches = [order[i:i + BATCH] for i in range(0, len(order), BATCH)]
        for b, idx in enumerate(batches):
            if step >= steps:
                break
            micro += 1
            sync = micro % accumulation == 0 or b == len(batches) - 1
            x, y = data["x"][idx], data["y"][idx]
            with contextlib.nullcontext() if sync else model.no_sync():
                with torch.autocast(device.type, dtype or torch.bfloat16, enabled=dtype is not None):
                    loss = F.cross_entropy(model(x), y)
                scaler.scale(loss / accumulation if accumulation > 1 else loss).backward()
            if sync:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
            losses.append(loss.item())
            step += 1
        epoch += 1
    state = {k: v.detach().cpu().clone() for k, v in net.state_dict().items()}
    torch.save(state, os.path.join(out, f"py-final-rank{rank}.pt"))
    with open(os.path.join(out, f"py-losses-rank{rank}.txt"), "w") as f:
        f.writelines(f"{v:.9g}\n" for v in losses)
    net.eval()
    with torch.no_grad():
        acc = (net(data["tx"]).argmax(1) == data["ty"]).double().mean().item()
    with open(os.path.join(out, f"py-accuracy-rank{rank}.txt"), "w") as f:
        f.write(f"{acc:.6f}\n")
    # Every rank is past its last collective before any tears Gloo down: torch 2.x's Gloo group
    # destroyed while a peer still sends can abort the process ("terminate called without an
    # active exception"), the race the usual barrier-then-destroy shutdown avoids.
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
