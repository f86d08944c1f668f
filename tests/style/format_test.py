#!/usr/bin/env python3
"""Every C++ file of the tree is formatted as .clang-format says (CTest `format`). Debian's
clang-format 14 defines the format: scripts/test installs it. Prints each file that differs and
the command that formats it; exits 1 if any does, 2 when clang-format-14 is missing.
Usage: format_test.py SOURCE_DIR [CLANG_FORMAT]"""
import pathlib
import re
import shutil
import subprocess
import sys

root = pathlib.Path(sys.argv[1]).resolve()
tool = sys.argv[2] if len(sys.argv) > 2 else "clang-format-14"
if not shutil.which(tool):
    print(f"format: {tool} is not installed (apt-get install clang-format-14; scripts/test installs it)")
    sys.exit(2)

FOLDERS = ("apps", "lib", "runtime", "tests")
files = sorted(p for folder in FOLDERS for p in (root / folder).rglob("*") if p.suffix in (".h", ".cc", ".cu"))
# One process for the whole tree: --dry-run names each place that differs as FILE:LINE:COLUMN.
report = subprocess.run([tool, "--dry-run", "--style=file", *map(str, files)], capture_output=True, text=True)
named = set(re.findall(r"^(.+?):\d+:\d+: (?:warning|error): code should be clang-formatted", report.stderr, re.M))
unformatted = sorted(pathlib.Path(f).resolve().relative_to(root) for f in named)
if report.returncode != 0 and not unformatted:
    print(f"format: {tool} failed: {report.stderr.strip()}")
    sys.exit(2)

print(f"format: {len(files)} files checked against .clang-format with {tool}, {len(unformatted)} differ")
for rel in unformatted:
    print(f"{rel}: not formatted; run: {tool} -i {rel}")
sys.exit(1 if unformatted else 0)
