#!/usr/bin/env python3
"""The layers depend downward only, as the READMEs say (CTest `layers`):
- runtime/: each folder includes only folders listed before it in runtime/README.md's table;
- lib/: never runtime/, apps/ or CLI11 (lib/README.md), and no CUDA header;
- runtime/: never apps/;
- lib/, runtime/, apps/: no getenv("NAME") with a spelled-out name: variable names live in
  lib/launch/launch_env.h.
Usage: layers_test.py SOURCE_DIR. Prints every violation as file:line and exits 1 if any."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
readme = (root / "runtime" / "README.md").read_text()
order = re.findall(r"^\| `(\w+)/` \|", readme, re.M)
rank = {layer: i for i, layer in enumerate(order)}
include = re.compile(r'^\s*#\s*include\s+[<"]([^">]+)[">]')
problems = []

getenv = re.compile(r'getenv\(\s*"')
for path in sorted(root.glob("runtime/**/*")) + sorted(root.glob("lib/**/*")) + sorted(root.glob("apps/**/*")):
    if path.suffix not in (".h", ".cc", ".cu"):
        continue
    rel = path.relative_to(root)
    top, layer = rel.parts[0], rel.parts[1]
    for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        if getenv.search(line):
            problems.append(f"{rel}:{n}: spells an environment variable's name; name it in lib/launch/launch_env.h")
        m = include.match(line)
        if not m:
            continue
        target = m.group(1)
        parts = target.split("/")
        where = f"{rel}:{n}: includes {target}"
        if top == "lib" and (parts[0] in ("runtime", "apps", "CLI") or target.startswith("cuda") or target == "nccl.h"):
            problems.append(f"{where}: lib/ depends on neither runtime/, apps/, CLI11 nor CUDA")
        if top == "runtime" and parts[0] == "apps":
            problems.append(f"{where}: runtime/ never depends on apps/")
        if top == "runtime" and parts[0] == "runtime" and len(parts) > 2:
            if layer not in rank or parts[1] not in rank:
                problems.append(f"{where}: {layer}/ or {parts[1]}/ is missing from runtime/README.md's table")
            elif rank[parts[1]] > rank[layer]:
                problems.append(f"{where}: {layer}/ is listed before {parts[1]}/ in runtime/README.md")

print(f"layers: {len(order)} runtime layers ({' -> '.join(order)}), {len(problems)} problem(s)")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
