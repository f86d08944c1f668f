# SPDX-License-Identifier: Apache-2.0
"""accel's C++ DDP (parity_worker) against PyTorch's own DDP (parity_ddp.py, Debian's torch, the
same libtorch), both under `accel launch`, each rank pairwise: bit-identical parameters and
buffers at world 1 and 2 (also with accumulate(2)); at world 4, where the sums' order differs,
after 1 step within 1e-6 of each tensor's largest magnitude and after 100 steps losses within 1 %
and test accuracy within 1 point; bf16 autocast against torch.autocast("cpu", bfloat16): final
loss within 1e-2 relative; a run SIGKILLed after a checkpoint and resumed ends bit-identical to
an uninterrupted one. Prints the loss curves side by side. Case cuda-fp16 (scripts/test-gpu's
torch check, on a GPU machine): world 1 on CUDA over NCCL, fp16 autocast through the loss scaler
against GradScaler, cuDNN deterministic: bit-identical.
Usage: parity_test.py ACCEL PARITY_WORKER [CASE...]"""
import os
import sys
import tempfile

import torch

import torch_launch

HERE = os.path.dirname(os.path.abspath(__file__))
ACCEL, WORKER = sys.argv[1], sys.argv[2]


def launch(world, argv, env=None, precision="no", expect=0, device="cpu"):
    torch_launch.launch(ACCEL, world, argv, env=env, precision=precision, device=device, expect=expect)


def run_both(out, world, steps, accumulation, precision="no", device="cpu"):
    env = {"ACCELERATE_GRADIENT_ACCUMULATION_STEPS": str(accumulation)}
    launch(world, [WORKER, out, str(steps)], env, precision, device=device)
    py = [sys.executable, os.path.join(HERE, "parity_ddp.py"), out, str(steps), str(accumulation), precision, device]
    launch(world, py, precision=precision, device=device)


def read_losses(path):
    with open(path) as f:
        return [float(line) for line in f]


def side_by_side(out, rank, label):
    cpp, py = read_losses(f"{out}/losses-rank{rank}.txt"), read_losses(f"{out}/py-losses-rank{rank}.txt")
    print(f"  {label} rank {rank} loss curves (step: accel C++ DDP | PyTorch DDP)")
    for i in list(range(0, len(cpp), max(1, len(cpp) // 10))) + [len(cpp) - 1]:
        print(f"    {i + 1:4d}: {cpp[i]:.7f} | {py[i]:.7f}")
    return cpp, py


def compare_exact(out, world, label):
    for r in range(world):
        cpp, py = torch.load(f"{out}/final-rank{r}.pt"), torch.load(f"{out}/py-final-rank{r}.pt")
        assert set(cpp) == set(py), f"{label}: tensors differ: {sorted(cpp)} vs {sorted(py)}"
        for name in sorted(py):
            if not torch.equal(cpp[name], py[name]):
                diff = (cpp[name].double() - py[name].double()).abs().max().item()
                sys.exit(f"FAIL: {label} rank {r}: {name} differs from PyTorch DDP's (max |diff| {diff:.3g})")
        c, p = side_by_side(out, r, label)
        assert c == p, f"{label} rank {r}: loss curves differ"
    print(f"ok: {label}: every parameter and buffer bit-identical to PyTorch DDP's on all {world} ranks")


def compare_close(out, world, label, steps):
    for r in range(world):
        cpp, py = torch.load(f"{out}/final-rank{r}.pt"), torch.load(f"{out}/py-final-rank{r}.pt")
        for name in sorted(py):
            scale = py[name].double().abs().max().item() or 1.0
            err = (cpp[name].double() - py[name].double()).abs().max().item() / scale
            if steps == 1 and err > 1e-6:
                sys.exit(f"FAIL: {label} rank {r}: {name} off by {err:.3g} of its largest magnitude (> 1e-6)")
    if steps == 1:
        print(f"ok: {label}: after 1 step every tensor within 1e-6 relative on all {world} ranks")
        return
    cpp, py = side_by_side(out, 0, label)
    tail_c, tail_p = sum(cpp[-10:]) / 10, sum(py[-10:]) / 10
    assert abs(tail_c - tail_p) <= 0.01 * abs(tail_p), f"{label}: final losses {tail_c} vs {tail_p} (> 1 %)"
    acc_c = float(open(f"{out}/accuracy-rank0.txt").read())
    acc_p = float(open(f"{out}/py-accuracy-rank0.txt").read())
    assert abs(acc_c - acc_p) <= 0.01, f"{label}: test accuracy {acc_c:.4f} vs {acc_p:.4f} (> 1 point)"
    print(f"ok: {label}: last-10 mean loss {tail_c:.5f} vs {tail_p:.5f}, accuracy {acc_c:.4f} vs {acc_p:.4f}")


def check_resume(out):
    """SIGKILLed after a checkpoint, resumed: the parameters of the run that was never stopped."""
    whole, killed = f"{out}/whole", f"{out}/killed"
    os.makedirs(whole)
    os.makedirs(killed)
    launch(2, [WORKER, whole, "60", "--checkpoint", f"{whole}/ckpt", "20"])
    launch(2, [WORKER, killed, "60", "--checkpoint", f"{killed}/ckpt", "20", "--die-at", "45"], expect=137)
    launch(2, [WORKER, killed, "60", "--checkpoint", f"{killed}/ckpt", "20"])
    for r in range(2):
        a, b = torch.load(f"{whole}/final-rank{r}.pt"), torch.load(f"{killed}/final-rank{r}.pt")
        for name in sorted(a):
            assert torch.equal(a[name], b[name]), f"resume: rank {r}'s {name} differs from the uninterrupted run's"
    print("ok: resume: SIGKILLed at step 45, resumed from step 40's checkpoint: bit-identical to an uninterrupted run")


def main():
    cases = sys.argv[3:] or ["w1", "w2", "w1-acc2", "w2-acc2", "w4", "bf16", "resume"]
    for case in cases:
        with tempfile.TemporaryDirectory() as out:
            if case in ("w1", "w2", "w1-acc2", "w2-acc2"):
                world, acc = int(case[1]), (2 if case.endswith("acc2") else 1)
                run_both(out, world, 100, acc)
                compare_exact(out, world, case)
            elif case == "w4":
                run_both(out, 4, 1, 1)
                compare_close(out, 4, "w4 (1 step)", 1)
                run_both(out, 4, 100, 1)
                compare_close(out, 4, "w4 (100 steps)", 100)
            elif case == "bf16":
                run_both(out, 2, 100, 1, precision="bf16")
                cpp, py = side_by_side(out, 0, "bf16")
                tail_c, tail_p = sum(cpp[-10:]) / 10, sum(py[-10:]) / 10
                assert abs(tail_c - tail_p) <= 1e-2 * abs(tail_p), f"bf16: final loss {tail_c} vs {tail_p}"
                print(f"ok: bf16 autocast: last-10 mean loss {tail_c:.5f} vs PyTorch's {tail_p:.5f}")
            elif case == "cuda-fp16":
                run_both(out, 1, 100, 1, precision="fp16", device="cuda")
                used = open(f"{out}/device-rank0.txt").read().strip()
                assert used.startswith("cuda"), f"cuda-fp16: the C++ side trained on {used}, not a CUDA device"
                compare_exact(out, 1, case)
            elif case == "resume":
                check_resume(out)
            else:
                sys.exit(f"unknown case {case}")


if __name__ == "__main__":
    main()
