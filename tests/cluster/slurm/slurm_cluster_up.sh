# shellcheck shell=bash
# slurm_cluster_up.sh -- bring-up half of slurm_cluster.sh (sourced by it; the
# contract is in its header): slurm_prereqs, slurm_up and their helpers
# (network, hosts, slurm.conf).
#
# WHY IT IS BUILT THIS WAY (each point was tried on Debian 12, slurm-wlm
# 22.05.8, munge 0.5.15):
#   * slurmd 22.05 always initialises a cgroup plugin, and autodetection
#     fails unless /sys/fs/cgroup holds a cgroup2 or v1-with-"systemd"
#     hierarchy ("error: No filesystem mounted on /sys/fs/cgroup", "Unexpected
#     fs type on /sys/fs/cgroup/systemd", then "slurmd initialization
#     failed"); there is no cgroup/none in 22.05. cgroup.conf names
#     cgroup/v1, which skips detection, and with proctrack/linuxproc +
#     task/none nothing uses cgroups afterwards (tested: slurmd starts with no
#     cgroup filesystem at all), so the machine's cgroup layout does not
#     matter and none of its cgroups is written.
#   * Hosts are entered with nsenter --net, not `ip netns exec`: that one
#     remounts /sys (hiding /sys/fs/cgroup) and would want /etc/netns/<ns>/
#     for the hosts file; our own mount namespace does that part.
#   * One munged with its own key and socket in SL_DIR (AuthInfo=socket=...),
#     not the system one: nothing of the machine's munge is used or changed. A
#     filesystem socket is reachable from every network namespace.
#   * The controller has a host of its own so that its fixed ports cannot clash
#     with another run or a real slurmctld on the machine.
#   * Tasks are tracked by proctrack/linuxproc (process tree) by default; it
#     loses a process that daemonises (setsid + reparent), as on any cluster
#     using it. SL_PROCTRACK=cgroup uses proctrack/cgroup instead, on machines
#     with a cgroup v1 freezer at /sys/fs/cgroup/freezer only: each host gets
#     its own directory /sys/fs/cgroup/freezer/accel-sl<SL_ID>-<host> of the
#     machine's hierarchy, bind-mounted onto /sys/fs/cgroup/freezer in that
#     host, removed again by slurm_down / slurm_sweep. KillWait=5 so scancel
#     escalates to SIGKILL after 5 s.
#   * SlurmctldDebug=debug2 logs each of slurmctld's time-limit tests ("Testing
#     job time limits", every 30 s, a compiled-in period), which is when a
#     job's --signal=SIG@TIME warning goes out: signal_checks.sh releases its
#     job ahead of one. slurm_dump_logs leaves the debug2 lines out.
#   * Each slurmd gets -N h<k>, and its host's hostname is h<k> too, so the
#     node name is right either way and `hostname` in a task names its node.
#   * /etc/hosts and an empty resolv.conf per host: names resolve as on a real
#     cluster (scontrol show hostnames $SLURM_JOB_NODELIST | head -1 gives a
#     master name that resolves) and nothing waits on an unreachable DNS.

slurm_prereqs() {
  SL_SKIP_REASON=
  local c missing=()
  if [ "$(id -u)" != 0 ]; then SL_SKIP_REASON="needs root (network namespaces, bridge)"; return 1; fi
  for c in slurmctld slurmd slurmstepd sbatch srun scancel sinfo squeue scontrol \
           munged mungekey ip nsenter unshare setsid mount hostname timeout; do
    command -v "$c" >/dev/null 2>&1 || missing+=("$c")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    SL_SKIP_REASON="missing commands: ${missing[*]} (apt-get install slurmctld slurmd slurm-client munge iproute2 util-linux)"
    return 1
  fi
  local err
  if ! err=$(unshare --net --uts --mount --pid --fork --mount-proc true 2>&1); then
    SL_SKIP_REASON="cannot create namespaces: unshare --net --uts --mount --pid: $err"
    return 1
  fi
  if ! err=$(ip link add "asbchk$$" type bridge 2>&1); then
    SL_SKIP_REASON="cannot create a bridge: $err"
    return 1
  fi
  ip link del "asbchk$$" 2>/dev/null || true
  if ! err=$(ip link add "asbchk$$" type veth peer name "asbchk${$}p" 2>&1); then
    SL_SKIP_REASON="cannot create a veth pair: $err"
    return 1
  fi
  ip link del "asbchk$$" 2>/dev/null || true
  case $SL_PROCTRACK in
    linuxproc) ;;
    cgroup)
      if [ "$(stat -f -c %T /sys/fs/cgroup/freezer 2>/dev/null)" != cgroupfs ]; then
        SL_SKIP_REASON="SL_PROCTRACK=cgroup needs a cgroup v1 freezer hierarchy at /sys/fs/cgroup/freezer"
        return 1
      fi ;;
    *) SL_SKIP_REASON="SL_PROCTRACK must be linuxproc or cgroup, not $SL_PROCTRACK"; return 1 ;;
  esac
  return 0
}

_sl_pick_net() {  # 10.214.X with X from SL_ID, skipping subnets in use
  local x
  x=$(( SL_ID % 200 + 20 ))
  for _ in $(seq 0 199); do
    if ! ip -4 route show 2>/dev/null | grep -q "^10\.214\.$x\." &&
       ! ip -4 addr show 2>/dev/null | grep -q "inet 10\.214\.$x\."; then
      echo "10.214.$x"; return 0
    fi
    x=$(( (x - 20 + 1) % 200 + 20 ))
  done
  return 1
}

# Start one host: network namespace + veth to the bridge, then PID 1 of a new
# UTS/mount/PID namespace running host_init.sh with SCRIPT (a file) as payload.
_sl_start_host() {
  local host=$1 addr=$2 script=$3
  local ns="$SL_PREFIX$SL_ID-$host" veth="asv$SL_ID$host" hdir="$SL_DIR/hosts/$host"
  mkdir -p "$hdir"
  ip netns add "$ns"
  ip link add "$veth" type veth peer name eth0 netns "$ns"
  ip link set "$veth" master "asb$SL_ID" up
  ip -n "$ns" addr add "$addr/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  # --kill-child: if unshare dies (slurm_down, sweep), PID 1 of the host gets
  # SIGKILL, and the kernel then kills every process of that PID namespace.
  # setsid: the host must not get the terminal's signals (Ctrl-C goes to the
  # test, whose trap runs slurm_down).
  setsid nsenter --net="/run/netns/$ns" \
    unshare --uts --mount --propagation private --pid --fork --mount-proc --kill-child \
    bash "$SL_LIB_DIR/host_init.sh" "$host" "$SL_DIR/etc" "$script" \
    </dev/null >"$hdir/console.log" 2>&1 &
  echo $! >"$hdir/unshare.pid"
  disown $!   # slurm_down kills it with SIGKILL: no "Killed" notice from bash
}

_sl_write_conf() {
  local n=$1 k
  mkdir -p "$SL_DIR/etc"
  {
    echo "127.0.0.1 localhost"
    echo "::1 localhost ip6-localhost ip6-loopback"
    echo "$SL_CTL_ADDR ctl"
    for k in $(seq 0 $(( n - 1 ))); do echo "$(slurm_node_addr "h$k") h$k"; done
  } >"$SL_DIR/etc/hosts"
  echo "# test cluster: no DNS, names are in /etc/hosts" >"$SL_DIR/etc/resolv.conf"
  cat >"$SLURM_CONF" <<EOF
# Generated by tests/cluster/slurm/slurm_cluster.sh for run $SL_ID.
ClusterName=accel$SL_ID
SlurmctldHost=ctl($SL_CTL_ADDR)
SlurmctldPort=6817
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SL_DIR/munge/munge.socket
MailProg=/bin/true
StateSaveLocation=$SL_DIR/hosts/ctl/state
SlurmctldPidFile=$SL_DIR/hosts/ctl/slurmctld.pid
SlurmctldLogFile=$SL_DIR/hosts/ctl/slurmctld.log
SlurmdSpoolDir=$SL_DIR/hosts/%n/spool
SlurmdPidFile=$SL_DIR/hosts/%n/slurmd.pid
SlurmdLogFile=$SL_DIR/hosts/%n/slurmd.log
ProctrackType=proctrack/$SL_PROCTRACK
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$SL_DIR/jobcomp.txt
ReturnToService=2
KillWait=5
MinJobAge=600
SlurmctldTimeout=30
SlurmdTimeout=30
SlurmctldDebug=debug2
SlurmdDebug=info
NodeName=DEFAULT CPUs=$SL_CPUS RealMemory=1000 State=UNKNOWN
EOF
  for k in $(seq 0 $(( n - 1 ))); do
    echo "NodeName=h$k NodeAddr=$(slurm_node_addr "h$k")" >>"$SLURM_CONF"
  done
  echo "PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$SLURM_CONF"
  # Read from slurm.conf's directory. Naming the plugin skips autodetection,
  # which wants a cgroup v1 or v2 filesystem under /sys/fs/cgroup/systemd.
  echo "CgroupPlugin=cgroup/v1" >"$SL_DIR/cgroup.conf"
}

slurm_up() {
  local n=${1:?slurm_up N}
  local k t0 state
  if [ -n "${SL_DIR:-}" ]; then echo "slurm_up: already up ($SL_DIR)" >&2; return 1; fi
  slurm_prereqs || { echo "slurm_up: $SL_SKIP_REASON" >&2; return 1; }
  # A test started from inside a SLURM job (or with SBATCH_* defaults set)
  # must not pass those on: placement must come from this cluster only.
  # SLURM_TEST_* are this suite's own settings.
  for k in $(compgen -e | grep -E '^(SLURM|SBATCH|SRUN|SALLOC|SQUEUE|SINFO|SCANCEL)_' |
             grep -v '^SLURM_TEST_' || true); do unset "$k"; done
  slurm_sweep
  trap 'slurm_down' EXIT
  trap 'exit 130' INT; trap 'exit 143' TERM; trap 'exit 129' HUP

  SL_DIR=$(mktemp -d "/tmp/accel-slurm.$SL_ID.XXXXXX")
  chmod 755 "$SL_DIR"
  SL_NET=$(_sl_pick_net) || { echo "slurm_up: no free 10.214.X.0/24" >&2; return 1; }
  SL_CTL_ADDR=$SL_NET.254
  SL_NODES=$(for k in $(seq 0 $(( n - 1 ))); do printf 'h%s ' "$k"; done); SL_NODES=${SL_NODES% }
  export SLURM_CONF=$SL_DIR/slurm.conf SL_DIR SL_NET SL_CTL_ADDR SL_NODES
  mkdir -p "$SL_DIR/munge" "$SL_DIR/hosts/ctl/state"
  for k in $SL_NODES; do mkdir -p "$SL_DIR/hosts/$k/spool"; done
  _sl_write_conf "$n"
  mungekey --create --keyfile="$SL_DIR/munge/munge.key" >/dev/null
  chmod 0400 "$SL_DIR/munge/munge.key"

  if [ "$SL_PROCTRACK" = cgroup ]; then
    SL_FREEZER=/sys/fs/cgroup/freezer/$SL_PREFIX$SL_ID
    for k in $SL_NODES; do mkdir "$SL_FREEZER-$k"; done
    export SL_FREEZER SL_PROCTRACK
  fi

  ip link add "asb$SL_ID" type bridge
  ip addr add "$SL_NET.1/24" dev "asb$SL_ID"
  ip link set "asb$SL_ID" up

  # The controller host: munged (foreground, root, own key/socket) then slurmctld.
  cat >"$SL_DIR/hosts/ctl/run.sh" <<EOF
munged --force --foreground --socket="$SL_DIR/munge/munge.socket" \\
  --key-file="$SL_DIR/munge/munge.key" --log-file="$SL_DIR/munge/munged.log" \\
  --pid-file="$SL_DIR/munge/munged.pid" --seed-file="$SL_DIR/munge/munged.seed" &
for i in \$(seq 1 100); do [ -S "$SL_DIR/munge/munge.socket" ] && break; sleep 0.1; done
slurmctld -D -i -f "$SLURM_CONF" &
wait -n   # either daemon exiting ends the host
EOF
  _sl_start_host ctl "$SL_CTL_ADDR" "$SL_DIR/hosts/ctl/run.sh"
  for k in $SL_NODES; do
    echo "exec slurmd -D -N $k -f \"$SLURM_CONF\"" >"$SL_DIR/hosts/$k/run.sh"
    _sl_start_host "$k" "$(slurm_node_addr "$k")" "$SL_DIR/hosts/$k/run.sh"
  done

  t0=$SECONDS
  while :; do
    state=$(sinfo -h -N -o '%N %T' 2>/dev/null | sort -u | awk '{printf "%s=%s ", $1, $2}' || true)
    state=${state% }
    if [ -n "$state" ] && ! grep -qv '=idle$' <<<"${state// /$'\n'}"; then
      if [ "$(wc -w <<<"$state")" -eq "$n" ]; then break; fi
    fi
    for k in ctl $SL_NODES; do
      if ! kill -0 "$(cat "$SL_DIR/hosts/$k/unshare.pid")" 2>/dev/null; then
        echo "slurm_up: host $k died during start-up" >&2
        slurm_dump_logs >&2
        return 1
      fi
    done
    if [ $(( SECONDS - t0 )) -ge "$SL_UP_TIMEOUT" ]; then
      echo "slurm_up: nodes not idle after ${SL_UP_TIMEOUT}s: ${state:-sinfo gave nothing}" >&2
      if [ "$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null || echo 0)" = 1 ]; then
        echo "slurm_up: note: bridge-nf-call-iptables=1, so iptables (e.g. Docker's FORWARD DROP) filters traffic between hosts on asb$SL_ID" >&2
      fi
      slurm_dump_logs >&2
      return 1
    fi
    sleep 0.2
  done
  _sl_log "up: $SL_NODES idle ($state), controller $SL_CTL_ADDR, dir $SL_DIR"
}
