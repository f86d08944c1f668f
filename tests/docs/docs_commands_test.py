#!/usr/bin/env python3
"""Every `accel …` command line of a fenced ```sh block in README.md and docs/*.md, run through
the real parser: `accel launch` with --dry_run added (nothing starts), `accel torchrun`, `accel deepspeed` and the
wizard (`accel config` alone or with --config_file) with --help added after the command (the
flags are still parsed), the rest as written, in a scratch folder holding the files the lines
name (tests/docs/fixtures, and a small safetensors model made here), with the build's programs
on PATH. A line the parser refuses (exit 2) fails the test, naming its file and line; a line
marked `# not run: REASON` is listed, not run.
Usage: docs_commands_test.py SOURCE_DIR ACCEL BIN_DIR"""
import glob
import json
import os
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile

SOURCE, ACCEL, BIN = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])


def commands():
    """(file, line number, text) of every command starting with `accel ` in an sh block; a line
    ending in a backslash continues on the next."""
    pages = [os.path.join(SOURCE, "README.md")] + sorted(glob.glob(os.path.join(SOURCE, "docs", "*.md")))
    for page in pages:
        inside, held, first = False, "", 0
        with open(page) as f:
            for number, line in enumerate(f, 1):
                stripped = line.strip()
                if stripped.startswith("```") and not held:
                    inside = stripped == "```sh" if not inside else False
                    continue
                if not inside:
                    continue
                if not held:
                    first = number
                if stripped.endswith("\\"):
                    held += stripped[:-1] + " "
                    continue
                text, held = held + stripped, ""
                if text.startswith("accel "):
                    yield os.path.relpath(page, SOURCE), first, text


def safetensors(path):
    """A model of one 2 x 2 float32 tensor in safetensors' layout: header length, JSON, data."""
    header = json.dumps({"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}}).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + b"\0" * 16)


def as_run(words):
    """The words to run: nothing of a launch starts, and no command waits for input."""
    command = words[1] if len(words) > 1 else ""
    if command == "launch" and "--dry_run" not in words:
        return words[:2] + ["--dry_run"] + words[2:]
    if command in ("torchrun", "deepspeed", "top") or (command == "config" and (len(words) == 2 or words[2].startswith("--"))):
        return words[:2] + ["--help"] + words[2:]
    if command == "test" and "--dry_run" not in words:
        return words + ["--dry_run"]
    return words


def main():
    scratch = tempfile.mkdtemp(prefix="accel-docs-")
    shutil.copytree(os.path.join(SOURCE, "tests", "docs", "fixtures"), scratch, dirs_exist_ok=True)
    # The docs run commands from a checkout: config-templates/ as it is there.
    shutil.copytree(os.path.join(SOURCE, "config-templates"), os.path.join(scratch, "config-templates"))
    os.makedirs(os.path.join(scratch, "my-model"))
    safetensors(os.path.join(scratch, "small.safetensors"))
    safetensors(os.path.join(scratch, "my-model", "model.safetensors"))
    env = dict(os.environ, HF_HOME=os.path.join(scratch, "hf"), HOME=scratch, PATH=f"{BIN}:{os.environ['PATH']}",
               ACCEL_NVML_LIBRARY=os.path.join(scratch, "none.so"), ACCEL_CUDA_LIBRARY=os.path.join(scratch, "none.so"),
               SLURM_JOB_ID="")
    failed, ran, not_run = [], 0, []
    try:
        # The check itself: a line with a flag no parser knows must be refused, or this test could not fail.
        probe = subprocess.run([ACCEL, "launch", "--dry_run", "--no_such_flag", "train.py"], cwd=scratch, env=env,
                               stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        if probe.returncode != 2:
            failed.append(f"a launch with --no_such_flag exited {probe.returncode}, not 2: refusals go unseen")
        for page, number, text in commands():
            where = f"{page}:{number}"
            if "# not run:" in text:
                not_run.append(f"{where}: {text.split('# not run:', 1)[1].strip()}")
                continue
            words = shlex.split(text, comments=True)
            missing = [w for w in words if w.startswith("accel-") and not shutil.which(w, path=env["PATH"])]
            if missing:
                not_run.append(f"{where}: this build has no {missing[0]}")
                continue
            argv = [ACCEL] + as_run(words)[1:]
            r = subprocess.run(argv, cwd=scratch, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=120)
            ran += 1
            if r.returncode == 2:
                failed.append(f"{where}: `{text}` refused (exit 2):\n{r.stderr.strip()}")
            print(f"{'FAIL' if r.returncode == 2 else 'ok  '} {where}: {shlex.join(as_run(words))} (exit {r.returncode})",
                  flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for line in not_run:
        print(f"not run: {line}")
    print(f"docs commands: {ran} run, {len(failed)} refused, {len(not_run)} marked not run")
    for f in failed:
        print("FAIL: " + f)
    sys.exit(1 if failed or ran == 0 else 0)


if __name__ == "__main__":
    main()
