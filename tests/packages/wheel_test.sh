#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# wheel_test.sh - the wheel scripts/packages built, installed as a user installs it beside
# Accelerate: a fresh virtual environment that sees the peers' Accelerate and torch through a .pth
# file (scripts/peers: no second download of torch), `pip install` of the wheel alone, then
# `accel launch --cpu --num_processes 2` of Accelerate's own test_script.py (through
# apps/test_script_runner.py, as `accel test` runs it, which says why) must pass, with
# `accel` and `python3` both the environment's. Reports the wheel's manylinux tag (auditwheel
# show, from scripts/packages) and its size.
# Usage: tests/packages/wheel_test.sh PACKAGES_DIR
# Exit: 0 passed, 1 failed, 77 skipped (no peers' environment), a failure instead under CI=true.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[[ $# == 1 && -d $1 ]] || { echo "usage: $0 PACKAGES_DIR" >&2; exit 2; }
packages=$(cd "$1" && pwd)
peers=${ACCEL_PEERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/accel-peers}/venv-$(sha256sum "$root/tests/peers/versions.txt" | cut -c1-12)
failures=0

skip() {
  if [[ ${CI:-} == true ]]; then echo "FAIL: $* (required when CI=true)"; exit 1; fi
  echo "SKIP: $*"
  exit 77
}
check() {  # check NAME COMMAND...
  local name=$1 out
  shift
  if out=$("$@" 2>&1); then echo "PASS: $name"; else echo "FAIL: $name"; echo "$out" | tail -n 25 | sed 's/^/  | /'; failures=$((failures + 1)); fi
}

[[ -f $peers/.complete ]] || skip "no peers' environment at $peers (scripts/peers --venv makes it)"
wheel=$(compgen -G "$packages/accel-*.whl" | head -n 1) || true
[[ -n $wheel ]] || { echo "FAIL: no wheel in $packages (scripts/packages builds it)"; exit 1; }

work=$(mktemp -d /tmp/accel-wheel.XXXXXX)
trap 'rm -rf "$work"' EXIT
t=$SECONDS
/usr/bin/python3 -m venv "$work/venv"
site=$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
peer_site=$("$peers/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$peer_site" >"$site/accel-peers.pth"
check "pip install of the wheel alone into a fresh environment" \
  "$work/venv/bin/pip" install --quiet --disable-pip-version-check --no-index --no-deps "$wheel"
echo "environment made and wheel installed in $((SECONDS - t)) s"
check "accel on the environment's PATH" test -x "$work/venv/bin/accel"
check "accel --version" "$work/venv/bin/accel" --version
script=$("$work/venv/bin/python" -c 'import accelerate.test_utils, os; print(os.path.join(os.path.dirname(accelerate.test_utils.__file__), "scripts", "test_script.py"))')
t=$SECONDS
check "accel launch --cpu --num_processes 2 of Accelerate's test_script.py" bash -c \
  "cd '$work' && PATH='$work/venv/bin':\$PATH HF_HOME='$work/hf' PYTHONWARNINGS=ignore accel launch --cpu \
   --num_processes 2 --main_process_port 0 '$root/apps/test_script_runner.py' '$script' >'$work/launch.log' 2>&1; rc=\$?; tail -n 40 '$work/launch.log'; \
   ((rc == 0)) && grep -q 'Testing, testing. 1, 2, 3.' '$work/launch.log' && grep -q 'Num processes: 2' '$work/launch.log'"
echo "Accelerate's test script ran in $((SECONDS - t)) s"
echo "wheel: $(basename "$wheel"), $(($(stat -c %s "$wheel") / 1024)) KiB;" \
  "$(grep -o 'consistent with the following platform tag: "[^"]*"' "$packages/auditwheel.txt" 2>/dev/null || echo 'auditwheel show: not run')"
echo "wheel_test: $failures failure(s)"
((failures == 0))
