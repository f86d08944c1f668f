#!/usr/bin/env python3
"""Comments state contracts, never figures or history (CTest `comment_figures`): a measured
speed or duration in a comment goes stale the day the code changes, and "issue 16" tells a
reader nothing the code does. Figures belong in a benchmark's output and docs/BENCHMARKS.md.
Looks at C++ `//` comments and `#` comments of CMake, Python and shell files under apps/, lib/,
runtime/, tests/ and scripts/ (benchmark scripts may state their targets: scripts/bench*).
Usage: comment_figures_test.py SOURCE_DIR. Prints file:line for each and exits 1 if any."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1]).resolve()
FIGURE = re.compile(r"\d[\d.,-]*\s*(?:GB/s|MB/s|GiB/s|MiB/s|exec/s|µs|us|ns)\b|\b(?:took|takes) (?:about )?\d")
HISTORY = re.compile(r"\bissue \d+|\bbefore the fix\b|\bused to\b")
problems, seen = [], 0
for folder in ("apps", "lib", "runtime", "tests", "scripts"):
    for path in sorted((root / folder).rglob("*")):
        rel = path.relative_to(root)
        if not path.is_file() or path.name.startswith("bench") and folder == "scripts":
            continue
        if path.suffix in (".h", ".cc", ".cu"):
            marker = "//"
        elif path.suffix in (".py", ".sh", ".cmake") or path.name == "CMakeLists.txt" or (
                folder == "scripts" and not path.suffix):
            marker = "#"
        else:
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            at = line.find(marker)
            if at < 0 or (marker == "#" and line.lstrip().startswith("#!")):
                continue
            comment = line[at:]
            seen += 1
            for what, pattern in (("a figure", FIGURE), ("history", HISTORY)):
                m = pattern.search(comment)
                if m:
                    problems.append(f"{rel}:{n}: a comment states {what} ('{m.group(0)}'): say the contract; "
                                    "figures go to a benchmark and docs/BENCHMARKS.md")
print(f"comment_figures: {seen} comment lines read, {len(problems)} state figures or history")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
