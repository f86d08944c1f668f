#!/usr/bin/env bash
# Installs what accel needs to build and test on Debian 12 (idempotent: apt-get runs only when
# a package is missing). Sourced by scripts/demo and scripts/test.
set -euo pipefail

ACCEL_PACKAGES=(
  cmake ninja-build g++ ccache pkg-config
  libcli11-dev libyaml-cpp-dev nlohmann-json3-dev libboost-dev libboost-filesystem-dev
  libfmt-dev catch2 libgloo-dev
  # OpenSSL's headers: the etcd rendezvous opens libssl.so.3 only when https is asked for.
  libssl-dev
  python3-yaml
  # The libtorch component (runtime/torch/) and its example: Debian's libtorch, Fashion-MNIST.
  libtorch-dev zlib1g-dev dataset-fashion-mnist
)

# The CUDA generations the GPU bundle is built for: every one CUDA 13 still builds (Turing to
# Blackwell), and PTX of the newest so that later GPUs JIT-compile it. scripts/test's normal build
# uses them too, so that scripts/test-gpu pack takes its programs from that build.
# shellcheck disable=SC2034  # used by the scripts that source this one
ACCEL_CUDA_ARCHS="75-real;80-real;86-real;89-real;90-real;100-real;120"

accel_install_deps() {
  local missing=()
  for p in "${ACCEL_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "scripts: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Free space where the builds go, in whole GiB.
accel_free_gib() { df -Pk "$ACCEL_ROOT" | awk 'NR == 2 { printf "%d", $4 / 1048576 }'; }

# accel_prune_build DIR...: when fewer than ACCEL_PRUNE_BELOW_GIB (default 30) GiB are free,
# deletes the object files and precompiled headers of each DIR, whose tests have run (binaries,
# libraries and logs stay; a later build compiles again): on a machine with room, incremental
# builds keep their objects; on one without, the next build fits.
accel_prune_build() {
  local free dir freed
  free=$(accel_free_gib)
  ((free < ${ACCEL_PRUNE_BELOW_GIB:-30})) || return 0
  for dir; do
    [[ -d $dir ]] || continue
    freed=$(find "$dir" -type f \( -name '*.o' -o -name '*.gch' \) -printf '%s\n' | awk '{ s += $1 } END { printf "%.1f", s / 2^30 }')
    find "$dir" -type f \( -name '*.o' -o -name '*.gch' \) -delete
    echo "scripts: $free GiB free: deleted the object files of $dir ($freed GiB)"
  done
}

# Configures (if needed) and builds one build directory: accel_build DIR [cmake args...]
# ACCEL_BUILD_TARGETS="t1 t2" builds only those targets (and what they need).
accel_build() {
  local dir=$1
  shift
  mkdir -p "$dir"
  cmake -S "$ACCEL_ROOT" -B "$dir" -G Ninja "$@" >"$dir/configure.log" 2>&1 || {
    cat "$dir/configure.log"
    echo "scripts: cmake configure of $dir failed" >&2
    return 1
  }
  grep -E '^-- (accel|  \[)' "$dir/configure.log" || true
  local targets=()
  for t in ${ACCEL_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
  cmake --build "$dir" -j "$(nproc)" "${targets[@]}" >"$dir/build.log" 2>&1 || {
    tail -n 60 "$dir/build.log"
    echo "scripts: build of $dir failed (full log: $dir/build.log)" >&2
    return 1
  }
}
