# SPDX-License-Identifier: Apache-2.0
"""ZeRO stages 1-3 of the libtorch component (runtime/torch/zero/) under `accel launch` with
Accelerate's DeepSpeed and FSDP settings, against the component's own DDP on the same data,
initial weights and steps (zero_worker.cc):
- stage 1 is DDP's gradients with a sharded optimizer step: bit-identical to DDP always;
- stages 2 and 3 reduce-scatter (a sum in another order than DDP's all-reduce at world 4, one
  reduction per micro-step under accumulation instead of one per window, clipping's norm from
  shards): bit-identical at world 2 without accumulation or clipping, within 1e-6 relative
  otherwise;
- the stage each setting chooses, the sharding units of fsdp_transformer_layer_cls_to_wrap;
- checkpoints: stage 3 saved at world 4, resumed at world 2, equal to DDP doing the same; a
  SIGKILL during a save, then a resume, equal to the run never killed; the export read by
  torch.load(weights_only=True);
- memory: each rank's peak CPU bytes (an allocator counting every tensor's memory) per stage at
  world 2 and 4 against DDP's, and within 10 % of `accel estimate-memory`'s figure;
- bad use refused with exit 2 and the reason: a tied weight under stage 3, a parameter on another
  device, noSync() under stage 3, a checkpoint of another stage, LBFGS, hybrid sharding, a layer
  class the model does not have.
Under ACCEL_TEST_QUICK=1 (the sanitizer builds) the parity runs the first of its four cases, and
the settings and memory checks are left to the normal build (the same code paths there; every
launch is several times slower under a sanitizer).
Usage: zero_test.py ACCEL ZERO_WORKER [CHECK...]   (CHECK: parity settings checkpoints memory
refusals; default all)"""
import json
import os
import subprocess
import sys
import tempfile

import torch

import torch_launch

ACCEL, WORKER = sys.argv[1], sys.argv[2]
QUICK = os.environ.get("ACCEL_TEST_QUICK") == "1"
TMP = tempfile.mkdtemp(prefix="zero_test.")


def deepspeed(stage, *extra):
    return ["--use_deepspeed", "--zero_stage", str(stage), *extra]


def run(name, world, flags, *args, expect=0):
    """One training run in TMP/name; returns (its output, its directory)."""
    out = os.path.join(TMP, name)
    os.makedirs(out, exist_ok=True)
    cmd = [ACCEL, "launch", "--num_processes", str(world), "--main_process_port", "0", *flags, WORKER, out, *map(str, args)]
    job = subprocess.run(cmd, env=torch_launch.ENV, capture_output=True, text=True, timeout=600)
    if job.returncode != expect:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {job.returncode}, expected {expect}\n{job.stdout}\n{job.stderr}")
    return job.stdout + job.stderr, out


def weights(out, rank=0):
    return torch.load(os.path.join(out, f"final-rank{rank}.pt"), weights_only=False)  # pickle_save's type tags


def difference(a, b):
    """'exact', or the largest relative difference over every tensor."""
    if all(torch.equal(a[k], b[k]) for k in b):
        return "exact", 0.0
    worst = max(((a[k] - b[k]).abs().max() / b[k].abs().max().clamp(min=1e-30)).item() for k in b)
    return "differs", worst


def check_same(what, got, reference, exact):
    kind, worst = difference(got, reference)
    if exact:
        assert kind == "exact", f"{what}: not bit-identical to DDP (max relative {worst:.3g})"
    else:
        assert worst <= 1e-6, f"{what}: {worst:.3g} relative from DDP, more than 1e-6"
    return kind if kind == "exact" else f"{worst:.1e}"


def load_export(path):
    """torch.load's default, weights_only=True, from torch 2.6 on (scripts/torch2_smoke runs this
    file with torch 2.15); torch 1.13's weights-only reader predates the floats it holds."""
    major, minor = (int(v) for v in torch.__version__.split(".")[:2])
    return torch.load(path) if (major, minor) >= (2, 6) else torch.load(path, weights_only=False)


def memory_lines(text):
    return {int(f[2]): (int(f[4]), int(f[6]), int(f[8]))
            for f in (line.split("] ", 1)[-1].split() for line in text.splitlines()) if f[:1] == ["memory"]}


def check_parity():
    cases = [  # world, optimizer, extra launch flags, worker options, which stages are exact
        (2, "adamw", [], [], {1, 2, 3}),
        (4, "sgd", [], ["--clip", 0.5], {1}),
        (2, "sgd", ["--gradient_accumulation_steps", "2"], [], {1}),
        (4, "adamw", ["--gradient_accumulation_steps", "2"], ["--clip", 1.0], {1}),
    ]
    if QUICK:
        cases = cases[:1]
    for world, opt, flags, options, exact in cases:
        label = f"w{world}-{opt}{'-acc2' if flags else ''}{'-clip' if options else ''}"
        _, ddp = run(f"{label}-ddp", world, deepspeed(0, *flags), 24, opt, *options)
        reference = weights(ddp)
        said = []
        for stage in (1, 2, 3):
            text, out = run(f"{label}-s{stage}", world, deepspeed(stage, *flags), 24, opt, *options)
            assert memory_lines(text)[0][0] == stage, f"{label}: the worker ran stage {memory_lines(text)[0][0]}"
            for r in range(world):
                said.append(check_same(f"{label} stage {stage} rank {r}", weights(out, r), reference, stage in exact))
        print(f"ok: parity {label}: stages 1-3 against DDP: {', '.join(sorted(set(said)))}")


def check_settings():
    _, ddp = run("settings-ddp", 2, ["--cpu"], 12, "adamw")
    fsdp2 = ["--use_fsdp", "--fsdp_version", "2", "--fsdp_reshard_after_forward", "true", "--fsdp_auto_wrap_policy",
             "TRANSFORMER_BASED_WRAP", "--fsdp_transformer_layer_cls_to_wrap", "Block"]
    fsdp1 = ["--use_fsdp", "--fsdp_version", "1", "--fsdp_sharding_strategy", "SHARD_GRAD_OP", "--fsdp_auto_wrap_policy",
             "SIZE_BASED_WRAP", "--fsdp_min_num_params", "500"]
    for name, flags, stage in (("fsdp2-full", fsdp2, 3), ("fsdp1-grad-op", fsdp1, 2),
                               ("fsdp1-no-shard", ["--use_fsdp", "--fsdp_sharding_strategy", "NO_SHARD"], 0)):
        text, out = run(name, 2, flags, 12, "adamw")
        assert memory_lines(text)[0][0] == stage, f"{name}: stage {memory_lines(text)[0][0]}, expected {stage}"
        check_same(name, weights(out, 1), weights(ddp), exact=True)
    # A DeepSpeed config file of the tutorials' kind: its stage and offload win, its "auto"
    # gradient_clipping takes --gradient_clipping, and every step clips as DeepSpeed's engine does:
    # the same weights as the program clipping itself, not those of no clipping.
    config = os.path.join(TMP, "ds_config.json")
    with open(config, "w") as f:
        json.dump({"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"},
                                         "offload_param": {"device": "cpu"}},
                   "gradient_clipping": "auto", "gradient_accumulation_steps": "auto"}, f)
    text, by_file = run("ds-file", 2, ["--use_deepspeed", "--deepspeed_config_file", config, "--gradient_clipping",
                                       "0.5"], 12, "sgd")
    assert memory_lines(text)[0][0] == 3, f"the config file's stage 3 was not used:\n{text}"
    _, by_program = run("ds-program", 2, deepspeed(3), 12, "sgd", "--clip", 0.5)
    _, unclipped = run("ds-unclipped", 2, deepspeed(3), 12, "sgd")
    check_same("gradient_clipping from the DeepSpeed config", weights(by_file), weights(by_program), exact=True)
    assert difference(weights(by_file), weights(unclipped))[0] != "exact", "gradient_clipping changed nothing"
    print("ok: settings: FSDP 2 reshard_after_forward with layer classes is stage 3, FSDP 1 SHARD_GRAD_OP with a size "
          "policy stage 2, NO_SHARD DDP; each bit-identical to DDP at world 2; a DeepSpeed config file's stage 3, "
          "offload and \"auto\" gradient_clipping taken as Accelerate fills them")


def check_checkpoints():
    finals = {}
    for stage in (0, 3):
        run(f"ck{stage}-w4", 4, deepspeed(stage), 12, "adamw", "--checkpoint", f"{TMP}/ck{stage}", "--save-at", 6)
        _, out = run(f"ck{stage}-w2", 2, deepspeed(stage), 12, "adamw", "--resume", f"{TMP}/ck{stage}", "--export",
                     f"{TMP}/export{stage}.pt")
        finals[stage] = out
        assert len(open(os.path.join(out, "losses-rank0.txt")).read().split()) == 6, "the resume did not start at step 6"
    check_same("stage 3 saved at world 4, resumed at world 2", weights(finals[3]), weights(finals[0]), exact=False)
    exports = {s: load_export(f"{TMP}/export{s}.pt") for s in (0, 3)}
    for k, v in weights(finals[3]).items():
        assert torch.equal(exports[3]["model"][k], v), f"export: {k} is not the model's"
    for i, fields in exports[0]["optimizers"][0]["state"].items():
        for f, v in fields.items():
            got = exports[3]["optimizers"][0]["state"][i][f]
            assert torch.allclose(torch.as_tensor(got).double(), torch.as_tensor(v).double(), rtol=1e-5, atol=1e-9), \
                f"export: optimizer state {i}.{f} differs from DDP's"
    # A SIGKILL while saving: whatever the moment, the resume starts from a whole checkpoint.
    _, whole = run("kill-whole", 2, deepspeed(3), 12, "adamw")
    run("kill", 2, deepspeed(3), 12, "adamw", "--checkpoint", f"{TMP}/kill", "--save-at", 4, "--die-in-save", 8,
        expect=137)
    _, resumed = run("kill-resumed", 2, deepspeed(3), 12, "adamw", "--checkpoint", f"{TMP}/kill", "--resume",
                     f"{TMP}/kill")
    check_same("killed during a save, resumed", weights(resumed), weights(whole), exact=True)
    print(f"ok: checkpoints: stage 3 from world 4 to 2 equals DDP's resume; the export loads with torch "
          f"{torch.__version__}'s torch.load and holds the model and AdamW's state; a SIGKILL during a save resumes "
          "to the same weights")


def estimate(path, world):
    out = subprocess.run([ACCEL, "estimate-memory", path, "--num_processes", str(world), "--mixed_precision", "no",
                          "--json"], capture_output=True, text=True, check=True).stdout
    return {s["name"]: s["bytes_per_process"] for s in json.loads(out)["training"]["strategies"]}


def check_memory():
    model = ["--width", 256, "--depth", 32, "--batch", 2]
    rows = []
    for world in (2, 4):
        peaks = {}
        for stage in (0, 1, 2, 3):
            text, out = run(f"mem-w{world}-s{stage}", world, deepspeed(stage), 3, "adamw", *model, "--safetensors",
                            f"{TMP}/model.safetensors")
            peaks[stage] = max(p for _, p, _ in memory_lines(text).values())
        figures = estimate(f"{TMP}/model.safetensors", world)
        names = {0: "DDP", 1: "ZeRO-1", 2: "ZeRO-2", 3: "ZeRO-3"}
        for stage, peak in peaks.items():
            name = next(n for n in figures if n.endswith(names[stage]))
            rows.append(f"w{world} s{stage} {peak / 2**20:.2f} MiB ({peak / figures[name]:.3f} of the estimate)")
        for stage, peak in peaks.items():
            name = next(n for n in figures if n.endswith(names[stage]))
            assert 0.9 <= peak / figures[name] <= 1.1, f"world {world} stage {stage}: measured {peak} bytes, " \
                f"estimate {figures[name]}: {rows}"
        assert peaks[3] < peaks[2] < peaks[1] < peaks[0], f"world {world}: peaks not in stage order: {peaks}"
    print("ok: memory per rank, peak CPU bytes against accel estimate-memory: " + "; ".join(rows))


def check_refusals():
    cases = [
        ("tied", deepspeed(3), ["--tied", 1], "shared by two modules"),
        ("meta", deepspeed(3), ["--meta-param", 1], "parameter 'stray' is on meta"),
        ("nosync", deepspeed(3), ["--nosync", 1], "noSync() under ZeRO stage 3"),
        ("lbfgs", deepspeed(2), [], "LBFGS cannot be sharded"),
        ("hybrid", ["--use_fsdp", "--fsdp_sharding_strategy", "HYBRID_SHARD"], [], "hybrid sharding is not supported"),
        ("class", ["--use_fsdp", "--fsdp_auto_wrap_policy", "TRANSFORMER_BASED_WRAP",
                   "--fsdp_transformer_layer_cls_to_wrap", "Decoder"], [], "no module of class Decoder"),
    ]
    for name, flags, options, said in cases:
        expect = 1 if name == "meta" else 2  # a model on the wrong device is not a usage error
        text, _ = run(f"bad-{name}", 2, flags, 4, "lbfgs" if name == "lbfgs" else "adamw", *options, expect=expect)
        assert said in text, f"{name}: the refusal does not say '{said}':\n{text}"
        # The worker lets accel::Error escape main: the runtime prints it and its hint, and exits
        # with its status, where the launcher's summary shows it.
        assert "accel: hint: " in text and f"exited with code {expect}" in text, f"{name}: no hint or code:\n{text}"
    run("other-stage-save", 2, deepspeed(3), 4, "adamw", "--checkpoint", f"{TMP}/other", "--save-at", 4)
    text, _ = run("other-stage", 2, deepspeed(2), 4, "adamw", "--resume", f"{TMP}/other", expect=2)
    assert "saved under ZeRO stage 3" in text, text
    print("ok: refusals: a tied weight, a parameter on another device, noSync() under stage 3, LBFGS, hybrid "
          "sharding, an unknown layer class, a checkpoint of another stage: exit 2, each naming why")


if __name__ == "__main__":
    checks = {"parity": check_parity, "settings": check_settings, "checkpoints": check_checkpoints,
              "memory": check_memory, "refusals": check_refusals}
    chosen = sys.argv[3:] or [name for name in checks if not (QUICK and name in ("settings", "memory"))]
    for name in chosen:
        checks[name]()
