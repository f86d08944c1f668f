#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ssh_hosts_selftest.sh - proves tests/cluster/ssh_hosts.sh: real sshds in a netns cluster.
# On 4 hosts, ssh_hosts_up 3, then from host 0 (unless said otherwise):
#   hostname      `ssh node1 hostname` prints node1 (each server has its own UTS namespace)
#   namespace     the remote command runs in node1's network namespace (its eth0 holds node1's
#                 address), and node2 reaches node0 by name (names resolve in every host)
#                 and by address
#   exit status   `ssh node1 'exit 7'` ends with 7; the client's environment does not travel, nor
#                 does root's ~/.bashrc run (PATH is sshd's)
#   stdin         `echo secret | ssh node2 cat` prints secret
#   bad key       the refused key (SSH_HOSTS_BAD_ARGS) gets "Permission denied"
#   host key      a known_hosts without the host key fails (StrictHostKeyChecking yes)
#   parallel      24 logins at once all succeed (MaxStartups)
#   stopped       after ssh_host_stop 2, "Connection refused"; after ssh_host_start 2, a login
#   sessions      ssh_hosts_wait_sessions_gone sees a session open, then gone
#   teardown      with a session still open, ssh_hosts_down leaves no sshd in any host, kills the
#                 session's remote command, removes SSH_HOSTS_DIR; a second call does nothing
# Then ssh_hosts_up 4 with the prefix "worker" on the same cluster (bring-up timed again).
# Prints the bring-up times. Exit: 0 pass, 1 fail, 77 skip (no root/netns/sshd; 1 under CI=true).
# `ok` always returns 0, so `COND && ok .. || bad ..` is an if-then-else here; SSH_HOSTS_ARGS is
# word-split on purpose (a launcher splits --ssh_args the same way); the remote commands are
# quoted for the remote shell.
# shellcheck disable=SC2015,SC2086,SC2016
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/netns_cluster.sh
source "$here/netns_cluster.sh"
# shellcheck source=SCRIPTDIR/ssh_hosts.sh
source "$here/ssh_hosts.sh"

cluster_require
ssh_hosts_require

failures=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; failures=$((failures + 1)); }
now() { echo "$EPOCHREALTIME"; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# SSH from host K: remote K NAME CMD...  (stdout and stderr together)
remote() {
  local k=$1; shift
  on_host "$k" ssh $SSH_HOSTS_ARGS "$@"   # word splitting of the args is the point
}

bg_client=
cluster_on_exit() {
  [[ -z $bg_client ]] || kill -KILL "$bg_client" 2>/dev/null || true
  ssh_hosts_down
}

t0=$(now)
cluster_up 4
t1=$(now)
ssh_hosts_up 3
t2=$(now)
echo "bring-up: cluster_up 4 $(secs "$t0" "$t1") s, ssh_hosts_up 3 $(secs "$t1" "$t2") s"
dir=$SSH_HOSTS_DIR
listeners=("${SSH_HOSTS_PIDS[@]}")

# hostname
out=$(remote 0 node1 hostname 2>&1) || true
[[ $out == node1 ]] && ok "hostname: ssh node1 hostname -> $out" || bad "hostname: got '$out'"

# namespace
out=$(remote 0 node1 ip -o -4 addr show eth0 2>&1) || true
if [[ $out == *" $(host_addr 1)/24 "* ]]; then ok "namespace: node1's eth0 has $(host_addr 1)"
else bad "namespace: node1's eth0: '$out' (want $(host_addr 1))"; fi
out=$(remote 2 node0 ip -o -4 addr show eth0 2>&1) || true
if [[ $out == *" $(host_addr 0)/24 "* ]]; then ok "namespace: host 2 -> node0 by name"
else bad "namespace: host 2 -> node0: '$out'"; fi

out=$(remote 0 "$(host_addr 1)" hostname 2>&1) || true
[[ $out == node1 ]] && ok "namespace: by address too ($(host_addr 1) -> $out)" || bad "by address: '$out'"

# exit status, environment
rc=0; remote 0 node1 'exit 7' || rc=$?
((rc == 7)) && ok "exit status: 7 comes back" || bad "exit status: $rc, not 7"
out=$(ACCEL_SSH_SELFTEST=leak remote 0 node1 'echo "${ACCEL_SSH_SELFTEST:-unset}"' 2>&1) || true
[[ $out == unset ]] && ok "environment: the client's does not travel" || bad "environment: '$out'"
out=$(remote 0 node1 'echo "$PATH"' 2>&1) || true
[[ $out == /* && $out != */root/* ]] && ok "environment: sshd's PATH, no ~/.bashrc ($out)" ||
  bad "environment: PATH '$out' (root's ~/.bashrc was read?)"

# stdin
out=$(echo secret | remote 0 node2 cat 2>&1) || true
[[ $out == secret ]] && ok "stdin: reaches the remote command" || bad "stdin: got '$out'"

# bad key
rc=0; out=$(on_host 0 ssh $SSH_HOSTS_BAD_ARGS node2 true 2>&1 </dev/null) || rc=$?
if ((rc == 255)) && [[ $out == *"Permission denied"* ]]; then ok "bad key: refused ($out)"
else bad "bad key: rc $rc, '$out'"; fi
grep -q "Failed publickey for root" "$dir/sshd-h2.log" &&
  ok "bad key: node2's log has the refusal" || bad "bad key: no refusal in node2's log"

# host key checking: an empty known_hosts must fail
rc=0
out=$(on_host 0 ssh $SSH_HOSTS_ARGS -o UserKnownHostsFile=/dev/null node1 true 2>&1 </dev/null) || rc=$?
if ((rc == 255)) && [[ $out == *"Host key verification failed"* ]]; then
  ok "host key: unknown host key refused"
else bad "host key: rc $rc, '$out'"; fi

# parallel logins
pids=()
for ((i = 0; i < 24; i++)); do
  remote 0 "node$((i % 3))" true </dev/null >"$dir/par.$i" 2>&1 &
  pids+=($!)
done
npar=0
for pid in "${pids[@]}"; do wait "$pid" && npar=$((npar + 1)); done
((npar == 24)) && ok "parallel: 24 of 24 logins" || bad "parallel: $npar of 24 ($(cat "$dir"/par.*))"

# stopped server
ssh_host_stop 2
rc=0; out=$(remote 0 node2 true 2>&1 </dev/null) || rc=$?
if ((rc == 255)) && [[ $out == *"Connection refused"* ]]; then ok "stopped: $out"
else bad "stopped: rc $rc, '$out'"; fi
ta=$(now)
ssh_host_start 2
out=$(remote 0 node2 hostname 2>&1) || true
[[ $out == node2 ]] && ok "stopped: restarted in $(secs "$ta" "$(now)") s" || bad "restart: '$out'"

# sessions
ssh_hosts_wait_sessions_gone 5 && ok "sessions: none open" || bad "sessions: some left open"
remote 0 node1 'sleep 1' </dev/null &
pid=$!
sleep 0.5
[[ -n $(ssh_hosts_session_pids) ]] && ok "sessions: one seen while open" || bad "sessions: none seen"
wait "$pid" || bad "sessions: ssh node1 sleep 1 failed"
ssh_hosts_wait_sessions_gone 5 && ok "sessions: gone after it ended" || bad "sessions: still open"

# teardown with a session open: its remote command prints its PID, then sleeps
remote 0 node1 'echo $$; exec sleep 60' </dev/null >"$dir/remote.pid" 2>&1 &
bg_client=$!
for ((i = 0; i < 100; i++)); do
  [[ -s $dir/remote.pid ]] && break
  sleep 0.05
done
remote_pid=$(cat "$dir/remote.pid")
rm -f "$dir/remote.pid"
[[ $remote_pid =~ ^[0-9]+$ ]] && [[ -d /proc/$remote_pid ]] &&
  ok "teardown: remote sleep runs (PID $remote_pid)" || bad "teardown: no remote sleep ($remote_pid)"
if ((failures)); then
  for f in "$dir"/sshd-h*.log; do echo "---- $f ----"; cat "$f"; done
fi
ta=$(now)
ssh_hosts_down
echo "teardown: ssh_hosts_down $(secs "$ta" "$(now)") s"
wait "$bg_client" 2>/dev/null || true   # the client ends once its server is gone
bg_client=
left=()
for ((k = 0; k < 4; k++)); do
  while read -r pid; do
    [[ $(cat "/proc/$pid/comm" 2>/dev/null) == sshd ]] && _sh_alive "$pid" && left+=("$pid")
  done < <(ip netns pids "$(host_ns "$k")")
done
((${#left[@]} == 0)) && ok "teardown: no sshd in any host" || bad "teardown: sshds left: ${left[*]}"
alive=()
for pid in "${listeners[@]}" "$remote_pid"; do _sh_alive "$pid" && alive+=("$pid"); done
((${#alive[@]} == 0)) && ok "teardown: listeners and the remote command are gone" ||
  bad "teardown: alive: ${alive[*]}"
[[ ! -e $dir ]] && ok "teardown: $dir removed" || bad "teardown: $dir is still there"
[[ -z ${SSH_HOSTS_DIR:-} && -z ${SSH_HOSTS_ARGS:-} ]] && ok "teardown: variables unset" ||
  bad "teardown: variables still set"
ssh_hosts_down && ok "teardown: a second ssh_hosts_down is a no-op" || bad "teardown: second call"

# again, 4 hosts named worker<k>
t1=$(now)
ssh_hosts_up 4 worker
t2=$(now)
echo "bring-up: ssh_hosts_up 4 $(secs "$t1" "$t2") s"
out=$(remote 1 worker3 hostname 2>&1) || true
[[ $out == worker3 ]] && ok "prefix: host 1 -> worker3" || bad "prefix: '$out'"
dir=$SSH_HOSTS_DIR
ssh_hosts_down
[[ ! -e $dir ]] || bad "teardown: $dir is still there"

cluster_down
if ((failures)); then echo "ssh_hosts selftest: $failures FAILED"; exit 1; fi
echo "ssh_hosts selftest: all passed"
