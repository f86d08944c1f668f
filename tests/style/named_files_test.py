#!/usr/bin/env python3
"""Every file of ours that a comment or a README names exists, and the README's layout table
names every folder of tests/ and every script (CTest `named_files`): a comment
that points to `shm_steps.h` or `scripts/bench_env` must lead somewhere after a file is renamed,
split or removed. Names are looked for in C++ `//` comments, `#` comments of scripts, CMake and
Python files, and in every README.md. A name with a folder must be a path from the tree's root,
from the naming file's folder or the end of one; a bare name must be some file's name. Names of
other projects' files (Gloo's headers, Accelerate's config) are listed in EXTERNAL.
Usage: named_files_test.py SOURCE_DIR. Prints file:line for each name that leads nowhere."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1]).resolve()
SKIP = {".git", "build", "node_modules"}
EXTERNAL = {
    # Files of other projects, or of the user's machine, that our comments and READMEs discuss.
    "default_config.yaml", "config.yaml", "nccl.h", "cuda_runtime_api.h", "cuda_runtime.h", "allreduce.h",
    "ProcessGroupWrapper.hpp", "setup.py", "train.py", "hostfile.txt", "requirements.txt", "pyproject.toml",
    "ds_config.json", "dynamic_rendezvous.py", "launch.py", "run.py", "api.py", "cluster.py", "config_args.py", "commands/launch.py",
    "nvml.h", "state.py", "resolver.py", "worker.py", "report.md", "fuzz.json", "fuzz.yaml",
    "my.yaml", "old.yaml", "out.yaml", "cfg.yaml", "my_config.yaml", "single_accelerator.yaml",
    "test_script.py", "test_sync.py", "test_ops.py", "test_distributed_data_loop.py", "test_ddp_comm_hook.py",
    "argparse_util.py", "runner.py", "authorized_keys", "known_hosts", "ssh_config", "ssh_config_bad",
    "torch/distributed/distributed_c10d.py",  # torch's, as py-spy names its frames
    "error.json",  # torchelastic's error file, written by a worker into the launch's log folder
    "stacks.txt",  # every rank's stack before a stop, written by the launcher (lib/launch/supervise/rank_stacks.h)
    "to_fsdp2.py",  # Accelerate's `accelerate to-fsdp2`
    # Accelerate's estimate-memory sources, and the shard index of a Hugging Face model directory
    # (model.safetensors.index.json, which the name pattern sees as index.json).
    "estimate.py", "modeling.py", "index.json",
    "fmt/format-inl.h", "fmt/format.h",  # fmt's headers, whose compiled half lib/common/fmt_library.cc builds
    "torch/numa/binding.py",  # torchrun's --numa-binding, which lib/launch/plan/numa_binding.h follows
    "linux/mempolicy.h",  # the kernel's memory policy constants (lib/common/process/child.cc)
    "0_30_0_sagemaker.yaml",  # one of Accelerate's own test configs (tests/peers/corpus holds a copy)
}
# A word in capitals is a placeholder (OUT/env-RANK.json, config-templates/X.yaml).
OURS_IN_CAPITALS = {"README", "CMakeLists", "LICENSE"}


def placeholder(component: str) -> bool:
    return any(re.fullmatch(r"[A-Z][A-Z_]*", word) and word not in OURS_IN_CAPITALS
               for word in re.split(r"[-.]", component))

tracked = [p for p in root.rglob("*") if p.is_file() and not (SKIP & set(p.relative_to(root).parts))
           and not p.relative_to(root).parts[0].startswith("build")]
rel_paths = {p.relative_to(root).as_posix() for p in tracked}
basenames = {p.name for p in tracked}
dirs = {d.relative_to(root).as_posix() for d in root.rglob("*") if d.is_dir()}

NAME = re.compile(r"(?<![\w:@-])((?:[\w.-]+/)*[\w-]+\.(?:h|cc|cu|py|sh|md|txt|yaml|json))(?![\w/])")
SCRIPT = re.compile(r"(?<![\w./:@-])(scripts/[\w-]+)(?![\w./-])")


def exists(name: str, here: pathlib.Path) -> bool:
    parts = pathlib.PurePosixPath(name).parts
    if len(parts) > 1 and re.fullmatch(r"[A-Z_]*(?:DIR|ROOT)", parts[0]):  # a folder's variable, then ours
        return exists("/".join(parts[1:]) if len(parts) > 2 else parts[1], here)
    if parts[0] == "path":  # path/to/job.sh: an example
        return True
    if any(placeholder(part) for part in parts):
        return True
    if name.startswith("../shared/"):  # the reference material beside the checkout, not in it
        return True
    if name in EXTERNAL or pathlib.PurePosixPath(name).name in EXTERNAL:
        return True
    if "/" not in name:
        return name in basenames
    if name in rel_paths or name in dirs or (here / name).resolve().exists():
        return True
    return any(p.endswith("/" + name) for p in rel_paths)


def comment_lines(path: pathlib.Path):
    text = path.read_text(errors="replace")
    if path.name == "README.md" or path.suffix == ".md":
        yield from enumerate(text.splitlines(), 1)
        return
    marker = "//" if path.suffix in (".h", ".cc", ".cu") else "#"
    for n, line in enumerate(text.splitlines(), 1):
        at = line.find(marker)
        if at >= 0:
            yield n, line[at:]


checked, problems = 0, []
for path in sorted(tracked):
    rel = path.relative_to(root)
    shell = path.suffix == ".sh" or (rel.parts[0] == "scripts" and not path.suffix)
    if not (path.suffix in (".h", ".cc", ".cu", ".py", ".md", ".cmake") or path.name == "CMakeLists.txt" or shell):
        continue
    for n, text in comment_lines(path):
        for name in NAME.findall(text) + SCRIPT.findall(text):
            checked += 1
            if not exists(name, path.parent):
                problems.append(f"{rel}:{n}: names {name}, which is not in the tree")

# The README's layout table names every folder of tests/ and every script of scripts/.
readme = (root / "README.md").read_text()
layout = readme[readme.find("## Layout"):]
layout = layout[: layout.find("\n## ", 1) if "\n## " in layout[1:] else len(layout)]
listed = 0
for folder in ("tests", "scripts"):
    for entry in sorted((root / folder).iterdir()):
        if entry.name in ("CMakeLists.txt", "__pycache__") or entry.name.startswith("."):
            continue
        listed += 1
        shown = entry.name + ("/" if entry.is_dir() else "")
        if f"`{shown}`" not in layout and f"`{folder}/{shown}`" not in layout:
            problems.append(f"README.md: the layout table does not name {folder}/{shown}")

print(f"named_files: {checked} names of files checked, {listed} entries of tests/ and scripts/ looked up in the "
      f"README's layout, {len(problems)} problem(s)")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
