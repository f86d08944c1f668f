#!/usr/bin/env python3
"""The layers depend downward only, as the READMEs say (CTest `layers`):
- runtime/: each folder includes only folders listed before it in runtime/README.md's table;
- runtime/comm/: a transport's subfolder (shm/, gloo/, ...) includes no other transport's, and
  the front door, comm/ itself, includes a transport only in its table (cpu_transport.h, .cc);
- lib/: never runtime/, apps/ or CLI11 (lib/README.md), and no CUDA header; lib/common/ never
  anything of lib/ outside it;
- lib/launch/: each room includes only rooms listed before it in lib/README.md's table of
  lib/launch (launch_env.h, the launcher-runtime contract, below them all; launch.h, the front
  door, above them all): no include runs back up;
- a launch plan (lib/launch/plan/launch_plan.h) is written only in lib/launch/plan/: elsewhere no
  LaunchPlan or WorkerSpec is taken by non-const reference, and none of their fields is assigned;
- runtime/: never apps/;
- lib/, runtime/, apps/: no environment variable's name spelled out (getenv("NAME"), a map
  lookup, a list of names): the contract's names live in lib/launch/launch_env.h, every other
  variable's in a row of lib/common/variables.h, torchrun's PET_<FLAG> are made from the flag
  (settings/torchrun_args.h), and the schema's exports column names Accelerate's.
Usage: layers_test.py SOURCE_DIR. Prints every violation as file:line and exits 1 if any."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
include = re.compile(r'^\s*#\s*include\s+[<"]([^">]+)[">]')
problems = []


def table(readme, heading=None):
    text = (root / readme).read_text()
    if heading:
        text = text[text.index(heading):]
        end = text.find("\n## ", 1)
        text = text if end < 0 else text[:end]
    return re.findall(r"^\| `([\w.]+)/?` \|", text, re.M)


runtime_order = table("runtime/README.md")
runtime_rank = {layer: i for i, layer in enumerate(runtime_order)}
launch_order = table("lib/README.md", "## lib/launch")
launch_rank = {room: i for i, room in enumerate(launch_order)}


def launch_room(parts):
    """The room of lib/launch/ path parts: a folder, or a top-level file's own name."""
    return parts[2] if len(parts) > 3 else parts[2].split(".")[0] + ".h"


TRANSPORT_TABLE = ("cpu_transport.h", "cpu_transport.cc")


def check_runtime(rel, layer, parts, where):
    if parts[0] == "apps":
        problems.append(f"{where}: runtime/ never depends on apps/")
    if parts[0] == "runtime" and len(parts) > 2:
        if layer not in runtime_rank or parts[1] not in runtime_rank:
            problems.append(f"{where}: {layer}/ or {parts[1]}/ is missing from runtime/README.md's table")
        elif runtime_rank[parts[1]] > runtime_rank[layer]:
            problems.append(f"{where}: {layer}/ is listed before {parts[1]}/ in runtime/README.md")
    if layer == "comm" and parts[:2] == ["runtime", "comm"] and len(parts) > 3:
        mine = rel.parts[2] if len(rel.parts) > 3 else None
        if mine is None and rel.name not in TRANSPORT_TABLE:
            problems.append(f"{where}: the front door includes a transport only in {' and '.join(TRANSPORT_TABLE)}")
        elif mine is not None and mine != parts[2]:
            problems.append(f"{where}: a transport ({mine}/) never includes another ({parts[2]}/)")


def check_lib(rel, target, parts, where):
    if parts[0] in ("runtime", "apps", "CLI") or target.startswith("cuda") or target == "nccl.h":
        problems.append(f"{where}: lib/ depends on neither runtime/, apps/, CLI11 nor CUDA")
    if rel.parts[1] == "common" and parts[0] == "lib" and parts[1] != "common":
        problems.append(f"{where}: lib/common/ depends on nothing else of lib/")
    if rel.parts[1] != "launch" or parts[:2] != ["lib", "launch"]:
        return
    own, other = launch_room(rel.parts), launch_room(parts)
    if own not in launch_rank or other not in launch_rank:
        problems.append(f"{where}: {own} or {other} is missing from lib/README.md's table of lib/launch")
    elif launch_rank[other] > launch_rank[own]:
        problems.append(f"{where}: runs back up ({own} is listed before {other} in lib/README.md)")


# The plan's types and their fields, from the header that declares them.
plan_header = (root / "lib/launch/plan/launch_plan.h").read_text()
plan_types = ["LaunchPlan", "WorkerSpec", "MachineShare", "HostPlan"]
fields = set()
for name in plan_types:
    body = re.search(r"struct %s \{(.*?)\n\};" % name, plan_header, re.S)
    fields.update(re.findall(r"^\s+[\w:<>,\s]+?[\s&*](\w+)(?:\s*=[^;]*)?;", body.group(1), re.M) if body else [])
fields.add("kind")  # declared with its enum on one line
fields.discard("operator")
mutating = r"\s*(=(?!=)|\+=|-=|\+\+|--|\.(push_back|emplace_back|insert|clear|erase|assign|pop_back)\b)"
field_write = re.compile(r"\b(plan_?|first|draft)\s*(\.|->)\s*(%s)\b%s" % ("|".join(sorted(fields)), mutating))
spec_write = re.compile(r"\bspec\s*->\s*(%s)\b%s" % ("|".join(sorted(fields)), mutating))
mutable_loop = re.compile(r"for \((?!const )auto\s*&\s*\w+\s*:\s*(plan_?|first|draft)\s*(\.|->)")
mutable_ref = re.compile(r"(?<![\w:])(?<!const )(plan::)?(LaunchPlan|WorkerSpec)\s*&(?!&)")

getenv = re.compile(r'getenv\(\s*"')
variable_homes = [root / "lib/launch/launch_env.h", root / "lib/common/variables.h"]
variable_names = set()
for home in variable_homes:
    text = home.read_text()
    variable_names.update(re.findall(r'=\s*"([A-Z][A-Z0-9_]+)";', text))
    variable_names.update(re.findall(r'\{"([A-Z][A-Z0-9_]+)",', text))
literal = re.compile(r'"([A-Z][A-Z0-9_]+)"')


def spells_variable(rel, code):
    if rel in [h.relative_to(root) for h in variable_homes] or str(rel).startswith("lib/config/schema"):
        return None
    for m in literal.finditer(code):
        if m.group(1) in variable_names or (m.group(1).startswith("PET_") and m.group(1) != "PET_"):
            return m.group(1)
    return None

for path in sorted(root.glob("runtime/**/*")) + sorted(root.glob("lib/**/*")) + sorted(root.glob("apps/**/*")):
    if path.suffix not in (".h", ".cc", ".cu"):
        continue
    rel = path.relative_to(root)
    top, layer = rel.parts[0], rel.parts[1]
    outside_plan = not str(rel).startswith("lib/launch/plan/")
    for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        code = line.split("//")[0]
        if getenv.search(line) or spells_variable(rel, code):
            problems.append(f"{rel}:{n}: spells an environment variable's name; read it through its row "
                            "(lib/common/variables.h) or the contract (lib/launch/launch_env.h)")
        if outside_plan and (field_write.search(code) or spec_write.search(code) or mutable_ref.search(code) or mutable_loop.search(code)):
            problems.append(f"{rel}:{n}: writes a launch plan outside lib/launch/plan/ (a new round builds a new plan)")
        m = include.match(line)
        if not m:
            continue
        target = m.group(1)
        where = f"{rel}:{n}: includes {target}"
        parts = target.split("/")
        if top == "lib":
            check_lib(rel, target, parts, where)
        if top == "runtime":
            check_runtime(rel, layer, parts, where)

print(f"layers: {len(runtime_order)} runtime layers ({' -> '.join(runtime_order)}), "
      f"{len(launch_order)} rooms of lib/launch ({' -> '.join(launch_order)}), "
      f"{len(fields)} plan fields, {len(variable_names)} variables, {len(problems)} problem(s)")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
