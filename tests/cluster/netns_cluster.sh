# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# netns_cluster.sh - a cluster of N "hosts" on one Linux machine, for multi-machine launch tests.
# Source it from bash (it sets no shell options of its own; callers use `set -euo pipefail`).
#
# Each host is a network namespace with loopback up and one interface, CLUSTER_HOST_IFNAME
# (eth0), holding its own address on a private /24. The hosts' veth peers hang on a Linux
# bridge in the root namespace that has no address, so hosts reach each other and nothing else,
# and nothing outside can reach them. Every name carries the owning shell's PID, so leftovers
# of killed runs can be told apart from live runs and swept:
#   namespace accel-cl<PID>-h<k>   bridge acb<PID>   bridge-side veth acv<PID>h<k>   (<= 15 chars)
#
# Contract:
#   cluster_check_capabilities    root + working netns/veth/bridge? else prints why, returns 1
#   cluster_require               the above, or exit 77 (skip), or exit 1 when CI=true
#   cluster_up N                  sweeps leftovers, builds hosts 0..N-1, traps EXIT/INT/TERM/HUP
#   cluster_down                  kills every process in the hosts, removes all; idempotent
#   cluster_sweep                 removes namespaces/bridges/veths of runs whose PID is dead
#   host_addr k / host_ns k       host k's address / namespace name
#   unowned_addr                  an address on the hosts' subnet that no host owns
#   on_host k CMD...              runs CMD in host k, foreground, with the caller's environment
#   on_host_bg k CMD...           the same in the background; its PID in CLUSTER_LAST_PID
#   cluster_link_down k / _up k   host k vanishes from / comes back to the network
#   cluster_netem DELAY RATE      tc netem on every host's egress; returns 1 (says why) if unavailable
#   cluster_names k NAME...       NAMEs resolve to host k's address inside every host, through each
#                                 namespace's own hosts file (/etc/netns/<ns>/hosts, which `ip netns
#                                 exec` mounts over /etc/hosts), as a cluster's DNS names its pods
# A caller that needs its own cleanup defines cluster_on_exit; the trap runs it first.

CLUSTER_OWNER=${CLUSTER_OWNER:-$$}       # the PID in every name: this shell's, alive while we are
CLUSTER_HOST_IFNAME=eth0                 # every host's interface, as on a real machine
CLUSTER_N=0
CLUSTER_BG_PIDS=()
CLUSTER_LAST_PID=
# Third octet from the PID, so two runs' addresses differ too (the bridges already isolate them).
CLUSTER_NET=10.213.$((CLUSTER_OWNER % 250 + 1))

_cl_ns() { echo "accel-cl${CLUSTER_OWNER}-h$1"; }
_cl_bridge() { echo "acb${CLUSTER_OWNER}"; }
_cl_veth() { echo "acv${CLUSTER_OWNER}h$1"; }
_cl_log() { echo "cluster: $*" >&2; }

host_ns() { _cl_ns "$1"; }
host_addr() { echo "${CLUSTER_NET}.$(($1 + 1))"; }
unowned_addr() { echo "${CLUSTER_NET}.250"; }   # hosts are .1 .. .N, N < 250

# Exit status 0 if the PID is a live process (any owner; we are root).
_cl_alive() { [[ -d /proc/$1 ]]; }

# Processes inside a namespace: TERM, a short grace, then KILL, so none outlives the host.
_cl_kill_ns_pids() {
  local ns=$1 pids _
  mapfile -t pids < <(ip netns pids "$ns" 2>/dev/null)
  ((${#pids[@]})) || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    mapfile -t pids < <(ip netns pids "$ns" 2>/dev/null)
    ((${#pids[@]})) || return 0
    sleep 0.1
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
  sleep 0.05
}

_cl_del_ns() {
  _cl_kill_ns_pids "$1"
  ip netns del "$1" 2>/dev/null || true   # takes its eth0 and so the veth pair with it
  rm -rf "/etc/netns/$1"
}

# Leftovers of earlier runs whose owner PID is gone. A live owner (a concurrent run) is left alone.
# Links first: deleting a veth is immediate, a namespace frees its devices in the background.
cluster_sweep() {
  local name pid
  for name in $(ip -o link show 2>/dev/null | awk -F': ' '{sub(/@.*/, "", $2); print $2}'); do
    [[ $name =~ ^(acb|acv|acp)([0-9]+)(h[0-9]+)?$ ]] || continue
    pid=${BASH_REMATCH[2]}
    if [[ $pid != "$CLUSTER_OWNER" ]] && ! _cl_alive "$pid"; then
      _cl_log "sweeping link $name (run $pid is gone)"
      ip link del "$name" 2>/dev/null || true
    fi
  done
  for name in $(ip netns list 2>/dev/null | awk '{print $1}'); do
    [[ $name =~ ^accel-cl([0-9]+)-(h[0-9]+|probe)$ ]] || continue
    pid=${BASH_REMATCH[1]}
    if [[ $pid != "$CLUSTER_OWNER" ]] && ! _cl_alive "$pid"; then
      _cl_log "sweeping namespace $name (run $pid is gone)"
      _cl_del_ns "$name"
    fi
  done
}

# Can this machine build a cluster? Tries the real thing once (a namespace, a bridge, a veth).
cluster_check_capabilities() {
  if [[ $(id -u) != 0 ]]; then
    echo "network namespaces need root (running as uid $(id -u))"; return 1
  fi
  if ! command -v ip >/dev/null; then
    echo "the ip command (iproute2) is not installed"; return 1
  fi
  local ns="accel-cl${CLUSTER_OWNER}-probe" br="acp${CLUSTER_OWNER}" err
  if ! err=$(ip netns add "$ns" 2>&1); then
    echo "ip netns does not work here: $err"; return 1
  fi
  if ! err=$( { ip link add "$br" type bridge &&
                ip link add "${br}h0" type veth peer name x0 netns "$ns"; } 2>&1); then
    ip link del "$br" 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
    echo "veth pairs or bridges do not work here: $err"; return 1
  fi
  ip link del "${br}h0" 2>/dev/null || true   # at once; with the namespace it would go later
  ip link del "$br" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
}

# Skip (77, CTest's SKIP_RETURN_CODE) where the cluster cannot be built, but never under CI,
# where a suite that ran nothing must not pass.
cluster_require() {
  local why
  why=$(cluster_check_capabilities) && return 0
  if [[ ${CI:-} == true ]]; then
    echo "FAIL: cluster tests cannot run under CI=true: $why" >&2; exit 1
  fi
  echo "SKIP: cluster tests: $why" >&2; exit 77
}

_cl_trap() {
  local code=$1
  trap - EXIT INT TERM HUP
  if declare -F cluster_on_exit >/dev/null; then cluster_on_exit || true; fi
  cluster_down
  exit "$code"
}

# One host: namespace, loopback, veth pair (bridge side acv.., host side eth0), address.
_cl_add_host() {
  local k=$1 ns veth
  ns=$(_cl_ns "$k"); veth=$(_cl_veth "$k")
  ip netns add "$ns"
  ip link add "$veth" type veth peer name "$CLUSTER_HOST_IFNAME" netns "$ns"
  ip link set "$veth" master "$(_cl_bridge)" up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "$(host_addr "$k")/24" dev "$CLUSTER_HOST_IFNAME"
  ip -n "$ns" link set "$CLUSTER_HOST_IFNAME" up
  mkdir -p "/etc/netns/$ns"
  printf '127.0.0.1 localhost\n' >"/etc/netns/$ns/hosts"
}

cluster_names() {
  local k=$1 j
  shift
  _cl_check_host "$k" || return 1
  for ((j = 0; j < CLUSTER_N; j++)); do echo "$(host_addr "$k") $*" >>"/etc/netns/$(_cl_ns "$j")/hosts"; done
}

cluster_up() {
  local n=$1 k br
  ((n >= 1 && n < 250)) || { _cl_log "cluster_up: 1..249 hosts, not $n"; return 1; }
  ((CLUSTER_N == 0)) || { _cl_log "cluster_up: a cluster is already up"; return 1; }
  cluster_sweep
  # Installed before anything exists, so a failure halfway still cleans up.
  trap '_cl_trap $?' EXIT
  trap '_cl_trap 130' INT
  trap '_cl_trap 143' TERM
  trap '_cl_trap 129' HUP
  CLUSTER_N=$n
  br=$(_cl_bridge)
  ip link add "$br" type bridge
  # No STP and no forwarding delay: ports forward the moment they are up. Bridged frames skip
  # the root's iptables (with br_netfilter, Docker's FORWARD policy DROP would eat them).
  ip link set "$br" type bridge stp_state 0 forward_delay 0 2>/dev/null || true
  ip link set "$br" type bridge nf_call_iptables 0 nf_call_ip6tables 0 nf_call_arptables 0 \
    2>/dev/null || true
  ip link set "$br" up
  for ((k = 0; k < n; k++)); do _cl_add_host "$k"; done
}

cluster_down() {
  local k pid
  for pid in "${CLUSTER_BG_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for ((k = 0; k < CLUSTER_N; k++)); do
    # The veth first: a deleted namespace frees its devices later, in the background.
    ip link del "$(_cl_veth "$k")" 2>/dev/null || true
    _cl_del_ns "$(_cl_ns "$k")"
  done
  ip link del "$(_cl_bridge)" 2>/dev/null || true
  for pid in "${CLUSTER_BG_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  CLUSTER_BG_PIDS=()
  CLUSTER_N=0
}

_cl_check_host() {
  if [[ ! $1 =~ ^[0-9]+$ ]] || (($1 >= CLUSTER_N)); then
    _cl_log "no host $1 (cluster of $CLUSTER_N)"; return 1
  fi
}

on_host() {
  local k=$1; shift
  _cl_check_host "$k" || return 1
  ip netns exec "$(_cl_ns "$k")" "$@"
}

# Not in $(...): the job must be this shell's child for `wait` and for cluster_down.
on_host_bg() {
  local k=$1; shift
  _cl_check_host "$k" || return 1
  ip netns exec "$(_cl_ns "$k")" "$@" &
  CLUSTER_LAST_PID=$!
  CLUSTER_BG_PIDS+=("$CLUSTER_LAST_PID")
}

# The bridge side goes down: host k's peers see silence (no reset, no error), as when a machine
# loses power or its cable; host k itself sees its carrier drop.
cluster_link_down() { _cl_check_host "$1" && ip link set "$(_cl_veth "$1")" down; }
cluster_link_up() { _cl_check_host "$1" && ip link set "$(_cl_veth "$1")" up; }

# One-way DELAY (e.g. 2ms) and RATE (e.g. 100mbit) on every host's egress, so each packet between
# two hosts is shaped once. Kernels without sch_netem cannot: say why and return 1.
cluster_netem() {
  local delay=$1 rate=$2 k err
  command -v tc >/dev/null || { echo "netem skipped: tc (iproute2) is not installed"; return 1; }
  for ((k = 0; k < CLUSTER_N; k++)); do
    if ! err=$(ip netns exec "$(_cl_ns "$k")" tc qdisc replace dev "$CLUSTER_HOST_IFNAME" root \
                 netem delay "$delay" rate "$rate" 2>&1); then
      echo "netem skipped: tc netem does not work here (kernel without sch_netem?): $err"
      return 1
    fi
  done
}
