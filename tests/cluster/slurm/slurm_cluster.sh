# shellcheck shell=bash
# slurm_cluster.sh -- a real SLURM cluster (Debian's slurm-wlm 22.05 + munge) on
# one Linux machine, each "host" a set of namespaces, for the accel test suite.
#
# CONTRACT
#   Source this file from a bash script that runs as root (it does not change
#   the caller's shell options; every function works under set -euo pipefail):
#       source tests/cluster/slurm/slurm_cluster.sh
#       slurm_up 2              # controller + 2 compute hosts, nodes idle
#       slurm_submit ...        # or sbatch/srun/squeue: SLURM_CONF is exported
#       slurm_down              # also run by the EXIT trap slurm_up installs
#
#   It installs nothing: slurmctld, slurmd, slurm-client (sbatch, srun, ...),
#   munge, iproute2 and util-linux (unshare, nsenter) must be present.
#   slurm_prereqs says whether they are, and the kernel lets us make
#   namespaces; on failure it returns 1 with the reason in SL_SKIP_REASON.
#
#   slurm_up N  brings up, under the id SL_ID (default: $$ of the sourcing
#   shell):
#     * bridge asb<SL_ID> with 10.214.X.1/24 in the caller's network namespace
#       (X derived from SL_ID, moved on while the subnet is already routed),
#       so that sbatch/squeue/scancel run by the test reach the controller;
#     * host "ctl" (10.214.X.254): munged and slurmctld;
#     * hosts h0..h<N-1> (10.214.X.2 ...): one slurmd each, NodeName=h<k>,
#       NodeAddr = that host's address, CPUs=$SL_CPUS (default 2; nothing
#       binds or limits CPUs, task/none), own spool/log/pid files.
#   Hosts have no default route: only the test subnet is reachable from them.
#   A host is: network namespace accel-sl<SL_ID>-<host> (named with `ip netns`,
#   a veth pair asv<SL_ID><host> <-> eth0 to the bridge), plus its own UTS
#   (hostname = node name), mount (/etc/hosts naming every host, an
#   /etc/resolv.conf without nameserver) and PID namespace (a bash as PID 1
#   reaps orphans; when it dies the kernel kills everything in the host).
#   It waits (SL_UP_TIMEOUT s, default 60) until sinfo shows all nodes idle,
#   and sets an EXIT trap (and INT/TERM/HUP traps that exit) running
#   slurm_down. A caller with an EXIT trap of its own must call slurm_down in it.
#
#   Exported after slurm_up: SLURM_CONF, SL_DIR (scratch: slurm.conf, logs,
#   hosts/<host>/...), SL_NODES ("h0 h1 ..."), SL_NET (e.g. 10.214.37),
#   SL_CTL_ADDR. Functions:
#     slurm_node_addr h<k>          prints the NodeAddr of h<k>
#     slurm_exec_on HOST CMD...     runs CMD inside that host's namespaces
#     slurm_submit OUT ARGS...      sbatch --parsable -o OUT ARGS..., prints id
#     slurm_wait_job ID TIMEOUT     waits for a terminal state; prints
#                                   "STATE EXITCODE" (e.g. "COMPLETED 0:0");
#                                   returns 1 on timeout
#     slurm_job_procs ID            prints "PID HOST CMDLINE" (PID as seen
#                                   here) of every live (non-zombie) process
#                                   on the machine whose environment has
#                                   SLURM_JOB_ID=ID and this cluster's
#                                   SLURM_CLUSTER_NAME, or that is the job's
#                                   slurmstepd in one of our hosts
#     slurm_down                    idempotent teardown: scancel, kill every
#                                   process of every host, delete namespaces,
#                                   bridge and SL_DIR (kept if SL_KEEP=1)
#     slurm_sweep                   removes what a killed earlier run left
#                                   (its SL_ID process no longer exists);
#                                   slurm_up calls it first
#     slurm_host_procs ERE          prints "PID HOST CMDLINE" of every live
#                                   process in one of our hosts whose command
#                                   line matches ERE (whatever its environment)
#     slurm_dump_logs               the last lines of every daemon's log
#                                   (without slurmctld's debug2 lines)
#
# FILES: this one (settings, helpers, job functions) sources
#   slurm_cluster_up.sh    slurm_prereqs, slurm_up (hosts, slurm.conf, daemons)
#   slurm_cluster_down.sh  slurm_down, slurm_sweep
# The reasons behind the design are in slurm_cluster_up.sh's header.

SL_ID=${SL_ID:-$$}
SL_UP_TIMEOUT=${SL_UP_TIMEOUT:-60}
SL_PREFIX=accel-sl
SL_PROCTRACK=${SL_PROCTRACK:-linuxproc}
SL_CPUS=${SL_CPUS:-2}
SL_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

_sl_log() { printf '[slurm_cluster %(%T)T] %s\n' -1 "$*" >&2; }

# A sleep during which a trapped signal (INT, TERM) is handled at once: bash
# runs traps only between foreground commands, but `wait` is interruptible.
sl_sleep() {
  sleep "$1" &
  _SL_SLEEP_PID=$!
  wait "$_SL_SLEEP_PID" || true
}

# Wall clock in seconds, 3 decimals, for timings.
sl_now() { date +%s.%N | cut -c1-14; }

# shellcheck source=SCRIPTDIR/slurm_cluster_up.sh
source "$SL_LIB_DIR/slurm_cluster_up.sh"
# shellcheck source=SCRIPTDIR/slurm_cluster_down.sh
source "$SL_LIB_DIR/slurm_cluster_down.sh"

slurm_node_addr() { local k=${1#h}; echo "$SL_NET.$(( k + 2 ))"; }

# PID (as seen from here) of PID 1 of a host's PID namespace.
_sl_host_init_pid() {
  local u c
  u=$(cat "$SL_DIR/hosts/$1/unshare.pid")
  for _ in $(seq 1 50); do
    c=$(cat "/proc/$u/task/$u/children" 2>/dev/null || pgrep -P "$u" || true)
    if [ -n "$c" ]; then echo "${c%% *}"; return 0; fi
    sleep 0.1
  done
  return 1
}

slurm_exec_on() {
  local host=$1; shift
  local ip
  ip=$(_sl_host_init_pid "$host") || { echo "slurm_exec_on: no host $host" >&2; return 1; }
  nsenter -t "$ip" --net --uts --mount --pid -- "$@"
}

slurm_dump_logs() {
  local f
  [ -n "${SL_DIR:-}" ] || return 0
  for f in "$SL_DIR"/hosts/*/*.log "$SL_DIR/munge/munged.log"; do
    [ -f "$f" ] || continue
    echo "----- ${f#"$SL_DIR"/} (last 20 lines)"
    grep -v '] debug2: ' "$f" | tail -n 20
  done
}

slurm_submit() {
  local out=$1; shift
  sbatch --parsable -o "$out" "$@"
}

slurm_wait_job() {
  local id=$1 limit=$2 t0=$SECONDS line st ec
  while :; do
    line=$(scontrol -o show job "$id" 2>/dev/null || true)
    st=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"$line")
    ec=$(sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p' <<<"$line")
    case $st in
      COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE|PREEMPTED)
        echo "$st $ec"; return 0 ;;
    esac
    if [ $(( SECONDS - t0 )) -ge "$limit" ]; then echo "${st:-UNKNOWN} timeout"; return 1; fi
    sleep 0.2
  done
}

slurm_job_procs() {
  local id=$1 p st cmd host ino h
  declare -A hostof=()
  for h in ctl $SL_NODES; do
    ino=$(stat -L -c %i "/run/netns/$SL_PREFIX$SL_ID-$h" 2>/dev/null || true)
    if [ -n "$ino" ]; then hostof[$ino]=$h; fi
  done
  # A task (or anything it started) carries SLURM_JOB_ID and, as job ids
  # repeat between clusters, this cluster's SLURM_CLUSTER_NAME; slurmstepd
  # names itself "slurmstepd: [ID.STEP]" and must run in one of our hosts.
  # One grep each over all of /proc, then a closer look at the few matches.
  for p in $( { grep -lzx "SLURM_JOB_ID=$id" /proc/[0-9]*/environ 2>/dev/null || true
                grep -lz "^slurmstepd: \[$id\." /proc/[0-9]*/cmdline 2>/dev/null || true
              } | sed 's|/[a-z]*$||' | sort -u); do
    st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "$p/status" 2>/dev/null || true)
    if [ -z "$st" ] || [ "$st" = Z ]; then continue; fi
    cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null || true)
    ino=$(stat -L -c %i "$p/ns/net" 2>/dev/null || true)
    host=${hostof[$ino]:-other}
    if [[ $cmd == "slurmstepd: [$id."* ]]; then
      if [ "$host" = other ]; then continue; fi
    elif ! grep -qzx "SLURM_CLUSTER_NAME=accel$SL_ID" "$p/environ" 2>/dev/null; then
      continue
    fi
    echo "${p#/proc/} $host ${cmd:0:60}"
  done
  return 0
}


slurm_host_procs() {
  local re=$1 h p st cmd
  for h in $SL_NODES ctl; do
    for p in $(ip netns pids "$SL_PREFIX$SL_ID-$h" 2>/dev/null || true); do
      st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$p/status" 2>/dev/null || true)
      if [ -z "$st" ] || [ "$st" = Z ]; then continue; fi
      cmd=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null || true)
      if grep -qE -- "$re" <<<"$cmd"; then echo "$p $h ${cmd:0:60}"; fi
    done
  done
  return 0
}
