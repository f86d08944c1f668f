#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# check_deepspeed_training.py - the DeepSpeed configs Accelerate's tutorials teach train under
# `accel launch` exactly as under `accelerate launch`, on this machine as it is (no GPU): the
# templates deepspeed_zero2.yaml and deepspeed_zero3_offload.yaml (optimizer and parameters
# offloaded to the CPU, so DeepSpeed swaps in its DeepSpeedCPUAdam), 2 processes, the script
# (deepspeed_train.py) choosing gloo. Every micro-batch's loss is compared bit for bit, and every
# file save_state wrote byte for byte, but one: under ZeRO-3 the last rank's fp32 partition ends
# in padding DeepSpeed never initialises (two runs of `accelerate launch` differ there too), so
# that file is compared loaded, every value and tensor equal, the padding elements excepted.
# DeepSpeed's CPU ops (DeepSpeedCPUAdam, its shared-memory collectives) are compiled once into the
# peers' environment (TORCH_EXTENSIONS_DIR under it; scripts/peers compiles them after installing).
# Run by scripts/peers in the peers' virtual environment (ACCEL: the accel binary). Exit 1 on a miss.
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile

import process_group
import torch
from launch_cases import ROOT, free_port

ACCEL = os.path.abspath(os.environ.get("ACCEL", os.path.join(ROOT, "build", "bin", "accel")))
SCRIPT = os.path.join(ROOT, "tests", "peers", "deepspeed_train.py")
CONFIGS = {"ZeRO-2": "deepspeed_zero2.yaml", "ZeRO-3, optimizer and parameters offloaded": "deepspeed_zero3_offload.yaml"}


def run(who, config, tmp):
    out = os.path.join(tmp, who)
    os.makedirs(out)
    launcher = ([os.path.join(os.path.dirname(sys.executable), "accelerate")] if who == "accelerate" else [ACCEL])
    command = [*launcher, "launch", "--config_file", os.path.join(ROOT, "config-templates", config),
               "--num_processes", "2", "--main_process_port", free_port(),
               SCRIPT, "--out", os.path.join(out, "result.json"), "--save", os.path.join(out, "state")]
    env = {**os.environ, "HF_HOME": os.path.join(tmp, "hf"), "ACCEL_PYTHON": sys.executable,
           "PYTHONWARNINGS": "ignore"}
    env.setdefault("TORCH_EXTENSIONS_DIR", os.path.join(sys.prefix, "torch_extensions"))
    code, stdout, stderr = process_group.run(command, 900, env=env, cwd=tmp)
    if code != 0:
        print(f"FAIL {who} launch exited {code}: {' '.join(command)}\n{stdout[-2500:]}{stderr[-2500:]}")
        return None
    with open(os.path.join(out, "result.json")) as f:
        result = json.load(f)
    result["state"] = os.path.join(out, "state")
    result["files"] = files(result["state"])
    return result


def files(folder):
    """{relative path: sha256} of every file under folder."""
    found = {}
    for base, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(base, name)
            with open(path, "rb") as f:
                found[os.path.relpath(path, folder)] = hashlib.sha256(f.read()).hexdigest()
    return found


def real_elements(state, rank):
    """How many elements of `rank`'s ZeRO-3 fp32 partition are parameters (the rest is padding)."""
    model = torch.load(os.path.join(state, "pytorch_model", f"zero_pp_rank_{rank}_mp_rank_00_model_states.pt"),
                       map_location="cpu", weights_only=False)
    total = sum(shape.numel() for group in model["param_shapes"] for shape in group.values())
    partition = -(-total // model["dp_world_size"])
    return max(0, min(partition, total - rank * partition))


def same_loaded(a, b, real):
    """Whether two loaded checkpoints hold the same values; fp32_flat_groups compared up to `real`."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(
            same_loaded(a[k], b[k], real) if k != "fp32_flat_groups" else
            all(torch.equal(x[:real], y[:real]) for x, y in zip(a[k], b[k])) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_loaded(x, y, real) for x, y in zip(a, b))
    if torch.is_tensor(a) and torch.is_tensor(b):
        return a.dtype == b.dtype and torch.equal(a, b)
    if hasattr(a, "__dict__") and type(a) is type(b):  # DeepSpeed's LossScaler has no __eq__
        return same_loaded(vars(a), vars(b), real)
    return a == b


def padding_only(name, theirs_dir, ours_dir):
    """Whether a differing ZeRO-3 optimizer file differs in its partition padding only."""
    match = re.fullmatch(r"pytorch_model/\w*zero_pp_rank_(\d+)_mp_rank_00_optim_states\.pt", name)
    if not match:
        return False
    load = lambda d: torch.load(os.path.join(d, name), map_location="cpu", weights_only=False)  # noqa: E731
    return same_loaded(load(theirs_dir), load(ours_dir), real_elements(ours_dir, int(match.group(1))))


def compare(title, theirs, ours):
    problems = []
    if theirs is None or ours is None:
        return ["a launch failed"]
    for key in ("distributed_type", "processes", "optimizer"):
        if theirs[key] != ours[key]:
            problems.append(f"{key}: accelerate {theirs[key]}, accel {ours[key]}")
    if theirs["losses"] != ours["losses"]:
        first = next(i for i, (a, b) in enumerate(zip(theirs["losses"], ours["losses"])) if a != b)
        problems.append(f"loss of micro-batch {first}: accelerate {float.fromhex(theirs['losses'][first])!r}, "
                        f"accel {float.fromhex(ours['losses'][first])!r}")
    padded = []
    for name in sorted(set(theirs["files"]) | set(ours["files"])):
        if theirs["files"].get(name) == ours["files"].get(name):
            continue
        if name not in theirs["files"] or name not in ours["files"]:
            problems.append(f"saved file {name}: only under {'accelerate' if name in theirs['files'] else 'accel'}")
        elif padding_only(name, theirs["state"], ours["state"]):
            padded.append(name)
        else:
            problems.append(f"saved file {name}: differs")
    last = float.fromhex(ours["losses"][-1])
    print(f"{'FAIL' if problems else 'ok  '} {title}: {ours['distributed_type']}, {ours['processes']} processes, "
          f"{ours['optimizer']}; last loss {last!r}, {len(ours['losses'])} losses and "
          f"{len(ours['files']) - len(padded)} saved files {'compared' if problems else 'bit-identical'}"
          + (f", {len(padded)} equal loaded but for DeepSpeed's uninitialised partition padding" if padded else ""))
    for p in problems[:20]:
        print(f"       {p}")
    return problems


def main():
    failed = 0
    for title, config in CONFIGS.items():
        tmp = tempfile.mkdtemp(prefix="accel-peers-deepspeed-")
        theirs, ours = run("accelerate", config, tmp), run("accel", config, tmp)
        failed += bool(compare(title, theirs, ours))
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"DeepSpeed training parity: {len(CONFIGS) - failed} of {len(CONFIGS)} configs bit-identical")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
