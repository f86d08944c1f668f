#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# check_estimate_memory.py - `accel estimate-memory` against Accelerate's own figures: GPT-2,
# Llama and BERT base models built offline by transformers from small configs, saved with the
# safetensors package (one file, a Hugging Face directory, and shards with their index through
# save_pretrained), then Accelerate's calculate_maximum_sizes(model) on the model object and
# `accel estimate-memory DIR --json` on the files: the totals must be equal to the byte and the
# largest layers equal in name and size, except for what safetensors does not store, each listed
# with its reason below; and the table accel prints must be the one Accelerate's own
# create_ascii_table, convert_bytes and estimate_training_usage make of those amounts. Prints
# accel's time on the sharded model. Run in the peers' virtual environment (ACCEL: the binary);
# exit 1 on any difference.
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HOME = tempfile.mkdtemp(prefix="accel-estimate-")
os.environ.update(HF_HUB_OFFLINE="1", HF_HOME=os.path.join(HOME, "hf"), TRANSFORMERS_OFFLINE="1")

import torch  # noqa: E402
from accelerate.commands.estimate import create_ascii_table, estimate_training_usage  # noqa: E402
from accelerate.utils import calculate_maximum_sizes, convert_bytes  # noqa: E402
from safetensors.torch import save_model  # noqa: E402
from transformers import BertConfig, BertModel, GPT2Config, GPT2Model, LlamaConfig, LlamaModel  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ACCEL = os.path.abspath(os.environ.get("ACCEL", os.path.join(ROOT, "build", "bin", "accel")))
# No GPU library: the check is of the model's figures, not of this machine.
ACCEL_ENV = dict(os.environ, ACCEL_NVML_LIBRARY=os.path.join(HOME, "no-nvml.so"),
                 ACCEL_CUDA_LIBRARY=os.path.join(HOME, "no-cuda.so"))

# What Accelerate counts and safetensors cannot hold, so accel cannot see: buffers a module
# registers with persistent=False are left out of state_dict, hence out of every save.
NOT_STORED = "a non-persistent buffer: not in state_dict, so never saved"


def models():
    """(name, model, how it is saved), each small; built in float32 as Accelerate's estimate builds them."""
    torch.manual_seed(0)
    gpt2 = GPT2Model(GPT2Config(n_layer=3, n_embd=64, n_head=4, vocab_size=1000, n_positions=128,
                                 bos_token_id=0, eos_token_id=0))
    llama = LlamaModel(LlamaConfig(hidden_size=128, intermediate_size=256, num_hidden_layers=3,
                                   num_attention_heads=4, num_key_value_heads=2, vocab_size=500))
    # BERT's largest layer is a BertLayer here; with a vocabulary large enough for its embeddings
    # to lead, Accelerate keeps BertEmbeddings whole (_no_split_modules, a class safetensors does
    # not record) while accel counts word_embeddings alone.
    bert = BertModel(BertConfig(hidden_size=128, num_hidden_layers=3, num_attention_heads=4,
                                intermediate_size=256, vocab_size=300, max_position_embeddings=64))
    return [("gpt2", gpt2, "file"), ("llama", llama, "shards"), ("bert", bert, "directory")]


def save(name, model, how):
    if how == "file":
        path = os.path.join(HOME, f"{name}.safetensors")
        save_model(model, path)
        return path
    path = os.path.join(HOME, name)
    if how == "shards":
        model.save_pretrained(path, max_shard_size="100KB")
    else:
        os.makedirs(path)
        save_model(model, os.path.join(path, "model.safetensors"))
    return path


def unstored(model):
    """{name: bytes} Accelerate counts that no save holds, with the module path of each."""
    kept = set(model.state_dict().keys())
    return {n: b.numel() * b.element_size() for n, b in model.named_buffers() if n not in kept}


def accelerate_table(total, largest, title_name, dtypes=("float32", "float16", "int8", "int4")):
    """estimate.py's gather_data and estimate_command on given amounts."""
    rows = []
    for dtype in dtypes:
        t, l, training = total, largest, estimate_training_usage(total, dtype)
        divisor = {"float16": 2, "int8": 4, "int4": 8}.get(dtype)
        if divisor:
            t, l = t / divisor, l / divisor
        usage = max(training.values())
        rows.append([dtype, convert_bytes(l), convert_bytes(t), convert_bytes(usage) if usage != -1 else "N/A"])
    headers = ["dtype", "Largest Layer", "Total Size", "Training using Adam"]
    return create_ascii_table(headers, rows, f"Memory Usage for loading `{title_name}`")


def accel(*args):
    r = subprocess.run([ACCEL, "estimate-memory", *args], capture_output=True, text=True, env=ACCEL_ENV)
    if r.returncode != 0:
        raise SystemExit(f"accel estimate-memory {' '.join(args)}: exit {r.returncode}\n{r.stderr}")
    return r.stdout


def compare(name, model, path):
    problems = []
    total, (largest, layer_names) = calculate_maximum_sizes(model)
    missing = unstored(model)
    got = json.loads(accel(path, "--json"))
    for buffer, size in sorted(missing.items()):
        print(f"  listed: {buffer} ({size} bytes): {NOT_STORED}")
    want_total = total - sum(missing.values())
    if got["total_bytes"] != want_total:
        problems.append(f"total: accel {got['total_bytes']}, Accelerate {total} less {total - want_total} unstored")
    layer = layer_names[0]
    in_layer = sum(s for b, s in missing.items() if b == layer or b.startswith(layer + "."))
    want = (layer, largest - in_layer)
    have = (got["largest_layer"]["name"], got["largest_layer"]["bytes"])
    if have != want:
        problems.append(f"largest layer: accel {have}, Accelerate {(layer, largest)} less {in_layer} unstored")
    table = accel(path).split("\n\n")[0]
    if table != accelerate_table(want_total, want[1], path):
        problems.append(f"table differs:\n{table}\nAccelerate's:\n{accelerate_table(want_total, want[1], path)}")
    print(f"{name}: {'same' if not problems else 'DIFFERENT'}: total {got['total_bytes']} bytes "
          f"({got['parameters']} parameters in {len(got['files'])} file(s)), largest `{have[0]}` {have[1]} bytes")
    return problems


def time_accel(path, runs=20):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        accel(path, "--json")
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    problems = []
    for name, model, how in models():
        path = save(name, model, how)
        problems += [f"{name}: {p}" for p in compare(name, model, path)]
        if how == "shards":
            shards = len(json.loads(accel(path, "--json"))["files"])
            print(f"  accel estimate-memory on the {shards} shards: {time_accel(path) * 1000:.1f} ms (median of 20 runs)")
    for p in problems:
        print("DIFFERENCE:", p)
    print(f"check_estimate_memory: {len(problems)} difference(s)")
    shutil.rmtree(HOME, ignore_errors=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
