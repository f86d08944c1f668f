# SPDX-License-Identifier: Apache-2.0
"""The Python side of the parity tests: the run parity_worker.cc made, repeated with PyTorch's own
DistributedDataParallel over Gloo, under `accel launch` (torchrun's environment).

Reads data.pt and init.pt that the C++ side wrote, trains ParityNet (parity_net.h's twin) with
DistributedSampler(seed=1234, shuffle), SGD with momentum, and Accelerate's accumulation rule
(sync every N micro-steps and at an epoch's last batch, loss / N, no_sync() otherwise), and
writes py-final-rank<r>.pt, py-losses-rank<r>.txt, py-accuracy-rank<r>.txt.
Usage: parity_ddp.py OUT_DIR STEPS ACCUMULATION [bf16]"""
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
    bf16 = len(sys.argv) > 4 and sys.argv[4] == "bf16"
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    if "RANK" not in os.environ:  # a launch of one process sets no rendezvous, as Accelerate's
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            os.environ.update(RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(s.getsockname()[1]))
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    data = torch.load(os.path.join(out, "data.pt"))
    net = ParityNet()
    net.load_state_dict(torch.load(os.path.join(out, "init.pt")))
    model = DistributedDataParallel(net)
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
                with torch.autocast("cpu", torch.bfloat16, enabled=bf16):
                    loss = F.cross_entropy(model(x), y)
                (loss / accumulation if accumulation > 1 else loss).backward()
            if sync:
                optimizer.step()
                optimizer.zero_grad()
            losses.append(loss.item())
            step += 1
        epoch += 1
    state = {k: v.detach().clone() for k, v in net.state_dict().items()}
    torch.save(state, os.path.join(out, f"py-final-rank{rank}.pt"))
    with open(os.path.join(out, f"py-losses-rank{rank}.txt"), "w") as f:
        f.writelines(f"{v:.9g}\n" for v in losses)
    net.eval()
    with torch.no_grad():
        acc = (net(data["tx"]).argmax(1) == data["ty"]).double().mean().item()
    with open(os.path.join(out, f"py-accuracy-rank{rank}.txt"), "w") as f:
        f.write(f"{acc:.6f}\n")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
