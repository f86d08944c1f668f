#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# abi_baseline_test.sh - scripts/abi_baseline (CTest `abi_baseline`): this build's `accel`, which
# links libstdc++ statically, needs no glibc symbol newer than the baseline (GCC 12's libstdc++.a
# reaches arc4random, glibc 2.36's: apps/static_libstdcxx.cc wraps it), and a program that calls
# arc4random is refused, naming the symbol and its version.
# Usage: tests/packages/abi_baseline_test.sh BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
if out=$("$root/scripts/abi_baseline" "$build/bin/accel" 2>&1); then
  echo "PASS: accel is within the baseline: $out"
else
  echo "FAIL: accel needs a symbol newer than the baseline:"; echo "$out"; status=1
fi
# A C program that calls arc4random, declared by hand (no header needed).
printf 'unsigned arc4random(void);\nint main(void) { return (int)(arc4random() & 1u); }\n' >"$work/newer.c"
cc -o "$work/newer" "$work/newer.c"
if out=$("$root/scripts/abi_baseline" "$work/newer" 2>&1); then
  echo "FAIL: a program calling arc4random (glibc 2.36) passed: $out"; status=1
elif grep -q "needs arc4random@GLIBC_2.36, newer than the baseline GLIBC_2.35" <<<"$out"; then
  echo "PASS: a program calling arc4random is refused, naming it"
else
  echo "FAIL: the refusal does not name arc4random@GLIBC_2.36:"; echo "$out"; status=1
fi
exit $status
