#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deb_chroot_test.sh - the Debian packages scripts/packages built, installed as a user installs
# them, into a bare Debian 12: a debootstrap minbase chroot (made once and cached outside the
# repository as a tar file, with the archives apt downloads into it), which starts with none of
# accel's build dependencies. In it, apt-get installs cmake and g++, then `apt-get install
# ./accel_*.deb ./accel-dev_*.deb` (and accel-torch with ACCEL_CHROOT_TORCH=1: libtorch pulls in
# some 800 MB), and these must pass:
#   accel --version, accel env, accel config default, a two-process `accel launch` of accel-train,
#   the completion scripts and manual page where their shells and man look for them, and a CMake
#   project that does find_package(accel) and links accel::runtime, run under `accel launch`;
# then `apt-get purge --autoremove` of the packages leaves the file system as it was before their
# install (a listing of every file, its size and mode, compared).
# Usage: tests/packages/deb_chroot_test.sh PACKAGES_DIR   (root; network to Debian's archive)
# Exit: 0 every check passed, 1 one failed, 77 skipped (not root, no debootstrap or no network),
# a failure instead under CI=true. Environment: ACCEL_PACKAGING_CACHE (default
# ~/.cache/accel-packaging).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[[ $# == 1 && -d $1 ]] || { echo "usage: $0 PACKAGES_DIR" >&2; exit 2; }
packages=$(cd "$1" && pwd)
cache=${ACCEL_PACKAGING_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/accel-packaging}
mirror=http://deb.debian.org/debian
base=$cache/bookworm-minbase.tar
failures=0

skip() {
  if [[ ${CI:-} == true ]]; then echo "FAIL: $* (required when CI=true)"; exit 1; fi
  echo "SKIP: $*"
  exit 77
}
check() {  # check NAME COMMAND...: PASS or FAIL, with the command's output on failure
  local name=$1 out
  shift
  if out=$("$@" 2>&1); then echo "PASS: $name"; else echo "FAIL: $name"; echo "$out" | tail -n 25 | sed 's/^/  | /'; failures=$((failures + 1)); fi
}

((EUID == 0)) || skip "a chroot needs root"
command -v debootstrap >/dev/null || skip "debootstrap is not installed (scripts/test installs it)"

# The cached base: debootstrap once, then a tar file to unpack for each run.
if [[ ! -f $base ]]; then
  mkdir -p "$cache"
  t=$SECONDS
  tmpbase=$(mktemp -d "$cache/debootstrap.XXXXXX")
  if ! debootstrap --variant=minbase bookworm "$tmpbase/root" "$mirror" >"$tmpbase/log" 2>&1; then
    tail -n 5 "$tmpbase/log"
    rm -rf "$tmpbase"
    skip "debootstrap of Debian 12 from $mirror failed (no network?)"
  fi
  tar -C "$tmpbase/root" -cf "$base.tmp" . && mv "$base.tmp" "$base"
  rm -rf "$tmpbase"
  echo "made the cached Debian 12 minbase in $((SECONDS - t)) s: $base ($(du -h "$base" | cut -f1))"
fi

work=$(mktemp -d /tmp/accel-chroot.XXXXXX)
chroot_dir=$work/root
cleanup() {
  for m in proc dev/pts dev var/cache/apt/archives; do umount -l "$chroot_dir/$m" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$chroot_dir" "$cache/apt-archives/partial"
tar -C "$chroot_dir" -xf "$base"
mount -t proc proc "$chroot_dir/proc"
mount --bind /dev "$chroot_dir/dev"
mount --bind /dev/pts "$chroot_dir/dev/pts"
mount --bind "$cache/apt-archives" "$chroot_dir/var/cache/apt/archives"
cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf"
in_root() { chroot "$chroot_dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
  DEBIAN_FRONTEND=noninteractive "$@"; }
apt_get() { in_root apt-get -o APT::Keep-Downloaded-Packages=true -y -q --no-install-recommends "$@"; }

t=$SECONDS
apt_get update >"$work/update.log" 2>&1 || { tail -n 5 "$work/update.log"; skip "apt-get update in the chroot failed (no network?)"; }
# As a user would: with what they recommend (make among it).
in_root apt-get -o APT::Keep-Downloaded-Packages=true -y -q install cmake g++ >"$work/tools.log" 2>&1 || { tail -n 20 "$work/tools.log"; echo "FAIL: apt-get install cmake g++"; exit 1; }
echo "chroot ready with cmake and g++ in $((SECONDS - t)) s"

# Every file of the system, with its size and mode, but what apt and dpkg keep of their own work
# and the group files, which checked_groups compares.
listing() {
  in_root find / -xdev \( -path /proc -o -path /dev -o -path /tmp -o -path /var/cache -o -path /var/log \
    -o -path /var/lib/apt -o -path /var/lib/dpkg -o -path /root -o -path /run/adduser -o -path '/etc/group*' \
    -o -path '/etc/gshadow*' \) -prune -o -printf '%p %s %m\n' | sort
}
# The groups, but rdma: libibverbs1 (Gloo's, through libgloo0) adds it on install, and Debian never
# removes a group on purge.
checked_groups() { grep -v '^rdma:' "$chroot_dir/etc/group"; }
listing >"$work/before.txt"
checked_groups >"$work/groups-before.txt"

mkdir -p "$chroot_dir/tmp/debs"
cp "$packages"/accel_*.deb "$packages"/accel-dev_*.deb "$chroot_dir/tmp/debs/"
debs=(./tmp/debs/accel_*.deb ./tmp/debs/accel-dev_*.deb)
names=(accel accel-dev)
if [[ ${ACCEL_CHROOT_TORCH:-} == 1 ]] && compgen -G "$packages/accel-torch_*.deb" >/dev/null; then
  cp "$packages"/accel-torch_*.deb "$chroot_dir/tmp/debs/"
  debs+=(./tmp/debs/accel-torch_*.deb)
  names+=(accel-torch)
fi
t=$SECONDS
# shellcheck disable=SC2016  # expanded inside the chroot's shell
check "apt-get install ${names[*]} (their dependencies from Debian)" \
  in_root sh -c "cd / && apt-get -o APT::Keep-Downloaded-Packages=true -y -q --no-install-recommends install ${debs[*]}"
echo "installed in $((SECONDS - t)) s"

check "accel --version" in_root accel --version
check "accel env" in_root sh -c 'HF_HOME=/tmp/hf accel env | grep -q "version: 0"'
check "accel config default" in_root sh -c 'HF_HOME=/tmp/hf accel config default && test -s /tmp/hf/accelerate/default_config.yaml'
check "accel launch: 2 processes of accel-train" in_root sh -c \
  'cd /tmp && HF_HOME=/tmp/hf accel launch --cpu --num_processes 2 --main_process_port 0 accel-train --steps 20 --log_every 0 2>&1 | tee /tmp/train.log | grep -q "weights crc32"'
check "completion scripts and the manual page where bash, zsh, fish and man look" in_root sh -c \
  'test -s /usr/share/bash-completion/completions/accel && test -s /usr/share/zsh/vendor-completions/_accel && test -s /usr/share/fish/vendor_completions.d/accel.fish && gzip -dc /usr/share/man/man1/accel.1.gz | grep -q "^.TH ACCEL 1"'
mkdir -p "$chroot_dir/tmp/project"
cp "$root"/tests/install/project/* "$chroot_dir/tmp/project/"
check "find_package(accel) from /usr: a project built against accel::runtime" in_root sh -c \
  'cmake -S /tmp/project -B /tmp/project-build -DCMAKE_BUILD_TYPE=Release >/tmp/cmake.log && cmake --build /tmp/project-build'
check "... and run under accel launch" in_root sh -c \
  'cd /tmp && HF_HOME=/tmp/hf accel launch --cpu --num_processes 2 --main_process_port 0 /tmp/project-build/hello_accel 2>&1 | grep -q "hello from rank 1 of 2"'
if [[ " ${names[*]} " == *" accel-torch "* ]]; then
  mkdir -p "$chroot_dir/tmp/torch_project"
  cp "$root"/tests/install/torch_project/* "$chroot_dir/tmp/torch_project/"
  check "find_package(accel COMPONENTS torch): a project built against accel::torch" in_root sh -c \
    'cmake -S /tmp/torch_project -B /tmp/torch-build >/tmp/cmake-torch.log && cmake --build /tmp/torch-build'
fi

rm -rf "$chroot_dir/tmp/debs" "$chroot_dir"/tmp/project*
t=$SECONDS
check "apt-get purge --autoremove ${names[*]}" apt_get purge --autoremove "${names[@]}"
echo "purged in $((SECONDS - t)) s"
listing >"$work/after.txt"
checked_groups >"$work/groups-after.txt"
if diff "$work/before.txt" "$work/after.txt" >"$work/diff.txt" && diff "$work/groups-before.txt" "$work/groups-after.txt" >>"$work/diff.txt"; then
  echo "PASS: after the purge the file system is as it was before the install ($(wc -l <"$work/before.txt") entries)"
else
  echo "FAIL: the purge left the file system changed:"
  head -n 30 "$work/diff.txt" | sed 's/^/  | /'
  failures=$((failures + 1))
fi
echo "deb_chroot_test: $failures failure(s)"
((failures == 0))
