# shellcheck shell=bash
# slurm_cluster_down.sh -- teardown half of slurm_cluster.sh (sourced by it;
# the contract is in its header): slurm_down removes this run's cluster,
# slurm_sweep what runs killed earlier left behind (their SL_ID process is
# gone). Names carry the owner's SL_ID: namespaces accel-sl<ID>-<host>, bridge
# asb<ID>, freezer cgroups accel-sl<ID>-<host>, directories /tmp/accel-slurm.<ID>.*.

# The pid that owns a leftover name, or empty when the name is not ours.
_sl_owner() { local n=$1; n=${n#"$SL_PREFIX"}; n=${n#asb}; n=${n%%[!0-9]*}; echo "$n"; }

_sl_kill_netns() {  # kill every process in a network namespace, then delete it
  local ns=$1 pids
  for _ in $(seq 1 50); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -z "$pids" ] && break
    # shellcheck disable=SC2086
    kill -9 $pids 2>/dev/null || true
    sleep 0.1
  done
  ip netns del "$ns" 2>/dev/null || true
}

_sl_rm_cgroup() {  # remove a freezer subtree, deepest first (all tasks gone)
  local _
  for _ in $(seq 1 50); do
    find "$1" -depth -type d -exec rmdir {} + 2>/dev/null || true
    [ -d "$1" ] || return 0
    sleep 0.1
  done
  _sl_log "could not remove cgroup $1"
}

slurm_sweep() {
  local ns br d owner
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${SL_PREFIX}[0-9]*-" || true); do
    owner=$(_sl_owner "$ns")
    if [ -n "$owner" ] && [ "$owner" != "$SL_ID" ] && ! kill -0 "$owner" 2>/dev/null; then
      _sl_log "sweep: leftover namespace $ns of dead run $owner"
      _sl_kill_netns "$ns"
    fi
  done
  # asb<pid>: a run's bridge; asbchk<pid>[p]: slurm_prereqs' probes.
  for br in $(ip -o link show 2>/dev/null | awk -F': ' '{sub(/@.*/, "", $2); print $2}' |
              grep -E '^asb(chk)?[0-9]+p?$' || true); do
    owner=${br#asb}; owner=${owner#chk}; owner=${owner%p}
    if [ "$owner" != "$SL_ID" ] && ! kill -0 "$owner" 2>/dev/null; then
      _sl_log "sweep: leftover link $br"
      ip link del "$br" 2>/dev/null || true
    fi
  done
  for d in /sys/fs/cgroup/freezer/"$SL_PREFIX"[0-9]*-*; do
    [ -d "$d" ] || continue
    owner=$(_sl_owner "$(basename "$d")")
    if [ "$owner" != "$SL_ID" ] && ! kill -0 "$owner" 2>/dev/null; then
      _sl_log "sweep: leftover cgroup $d"
      _sl_rm_cgroup "$d"
    fi
  done
  for d in /tmp/accel-slurm.*; do
    [ -d "$d" ] || continue
    owner=${d#/tmp/accel-slurm.}; owner=${owner%%.*}
    if [ "$owner" != "$SL_ID" ] && ! kill -0 "$owner" 2>/dev/null; then
      _sl_log "sweep: leftover directory $d"
      rm -rf "$d"
    fi
  done
}

slurm_down() {
  local h ns u ids
  [ -n "${SL_DIR:-}" ] || return 0
  # Ignore, not default: `timeout` sends its signal to the test and then again
  # to the whole process group, so a second TERM can arrive while we are
  # already tearing down, and would otherwise kill us half-way.
  trap - EXIT
  trap '' INT TERM HUP
  if [ -n "${_SL_SLEEP_PID:-}" ]; then kill "$_SL_SLEEP_PID" 2>/dev/null || true; fi
  if [ -d "$SL_DIR/hosts/ctl" ]; then
    ids=$(timeout 5 squeue -h -o %i 2>/dev/null || true)
    # shellcheck disable=SC2086
    if [ -n "$ids" ]; then timeout 5 scancel $ids 2>/dev/null || true; fi
  fi
  for h in "$SL_DIR"/hosts/*/; do
    h=$(basename "$h")
    u=$(cat "$SL_DIR/hosts/$h/unshare.pid" 2>/dev/null || true)
    if [ -n "$u" ]; then kill -9 "$u" 2>/dev/null || true; fi
  done
  for h in "$SL_DIR"/hosts/*/; do
    h=$(basename "$h")
    ns="$SL_PREFIX$SL_ID-$h"
    if ip netns list | awk '{print $1}' | grep -qx "$ns"; then _sl_kill_netns "$ns"; fi
  done
  ip link del "asb$SL_ID" 2>/dev/null || true
  for h in /sys/fs/cgroup/freezer/"$SL_PREFIX$SL_ID"-*; do
    if [ -d "$h" ]; then _sl_rm_cgroup "$h"; fi
  done
  if [ "${SL_KEEP:-0}" = 1 ]; then _sl_log "down: kept $SL_DIR"; else rm -rf "$SL_DIR"; fi
  unset SL_DIR
  trap - INT TERM HUP
  return 0
}
