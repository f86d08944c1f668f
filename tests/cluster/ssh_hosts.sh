# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# ssh_hosts.sh - a real OpenSSH server (Debian's /usr/sbin/sshd) in every host of a netns cluster
# (tests/cluster/netns_cluster.sh), for tests of launchers that reach their machines over ssh.
# Source it after netns_cluster.sh, from bash (it sets no shell options of its own; callers use
# `set -euo pipefail`).
#
# Everything lives in one private folder, SSH_HOSTS_DIR (mktemp -d, named after the cluster's
# owner PID so a later run removes one a SIGKILL left behind); no configuration, key or known host
# of ~/.ssh or /etc/ssh is read or written, on either side:
#   host_ed25519_key{,.pub}   the host key, the same for every host
#   id_ed25519{,.pub}         the client key (no passphrase), the only one in authorized_keys
#   bad_ed25519{,.pub}        a second client key that no host accepts ("key refused" tests)
#   authorized_keys           the client key's public half
#   known_hosts               the host key for every host's name and address
#   ssh_config                the client's whole configuration (ssh -F; no other file is read)
#   ssh_config_bad            the same with the bad key instead (see SSH_HOSTS_BAD_ARGS)
#   sshd_config.hK (K: 0..N-1)  host K's server: ListenAddress <host_addr K>:22, nothing else
#   sshd-h<k>.log / .pid      host k's server log (sshd -D -e: stderr) and PID file
# Each server runs in its host's network namespace (on_host_bg) and in a UTS namespace of its own
# whose hostname is the host's name, so `ssh node1 hostname` prints node1. The hosts share the
# machine's PID namespace and filesystem: a remote command sees every process and file.
# A remote command runs as root (`bash -c CMD`, HOME=/root, cwd /root) in sshd's environment only:
# PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin, none of the client's
# variables (no AcceptEnv), and root's ~/.bashrc is not read (SetEnv SHLVL=1; see below).
# Settings (environment): SSH_HOSTS_TIMEOUT=S  bring-up deadline (default 10)
#                         SSH_HOSTS_BASHRC=1   let the remote bash read root's ~/.bashrc
#                         SSH_HOSTS_SSHD=PATH  the server (default /usr/sbin/sshd; absolute)
#
# Contract:
#   ssh_hosts_check             sshd, ssh and ssh-keygen installed? else prints why, returns 1
#   ssh_hosts_require           the above, or exit 77 (skip), or exit 1 when CI=true
#   ssh_hosts_up N [PREFIX]     after cluster_up (N <= the cluster's hosts): keys, configs, one
#                               sshd per host 0..N-1, names PREFIX<k> (default node<k>) resolvable
#                               in every host (cluster_names); returns once every server accepted
#                               a login from host 0 by name (deadline SSH_HOSTS_TIMEOUT, 10 s), or
#                               returns 1 with the servers' logs (and everything removed again)
#   ssh_hosts_down              stops every server and its sessions (the process trees under
#                               them), removes SSH_HOSTS_DIR; idempotent. Wire it into the
#                               cluster's trap: cluster_on_exit() { ssh_hosts_down; ...; }
#   ssh_host_stop k             host k's server stops listening (connects get "Connection
#                               refused"); its sessions in flight go on
#   ssh_host_start k            starts it again (waits until it listens)
#   ssh_host_name k             host k's name (PREFIX<k>)
#   ssh_hosts_wait_sessions_gone [SECONDS]
#                               waits (default 10 s) until no sshd but the listeners is left in
#                               any host (every session ended); else lists them and returns 1
#   ssh_hosts_session_pids      the PIDs of those session sshds (per connection), one a line
# Exported once up (connect from inside a host, e.g. on_host 0 ssh $SSH_HOSTS_ARGS node1 CMD; the
# root namespace cannot reach the hosts):
#   SSH_HOSTS_DIR               the private folder
#   SSH_HOSTS_CONFIG            SSH_HOSTS_DIR/ssh_config
#   SSH_HOSTS_KEY               the authorized client key (private half)
#   SSH_HOSTS_BAD_KEY           the refused client key (private half)
#   SSH_HOSTS_ARGS              "-F SSH_HOSTS_CONFIG": what a launcher is given as --ssh_args
#   SSH_HOSTS_BAD_ARGS          "-F SSH_HOSTS_DIR/ssh_config_bad": logins with the refused key.
#                               (`-i BAD_KEY` on top of SSH_HOSTS_ARGS would not do: ssh adds
#                               command-line keys to the config's IdentityFile, and the good one
#                               then logs in.)
# Not exported: SSH_HOSTS_N, SSH_HOSTS_NAMES (array), SSH_HOSTS_PIDS (array, the listeners).

SSH_HOSTS_SSHD=${SSH_HOSTS_SSHD:-/usr/sbin/sshd}   # absolute: sshd re-executes itself per connection
SSH_HOSTS_N=0
SSH_HOSTS_PREFIX=node
SSH_HOSTS_NAMES=()
SSH_HOSTS_PIDS=()

_sh_log() { echo "ssh_hosts: $*" >&2; }

# A live process: it exists and is no zombie (a session sshd orphaned by its listener's death is
# reaped by PID 1, which in a container may never do it).
_sh_alive() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [[ ${stat:0:1} != Z ]]
}

# PID and all its descendants, one a line (from one `ps`, by parent PID).
_sh_tree() {
  ps -e -o pid=,ppid= 2>/dev/null | awk -v root="$1" '
    { parent[$1] = $2; pids[NR] = $1 }
    END {
      keep[root] = 1; print root
      do {
        more = 0
        for (i = 1; i <= NR; i++) {
          p = pids[i]
          if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; print p; more = 1 }
        }
      } while (more)
    }'
}

ssh_hosts_check() {
  local tool
  for tool in "$SSH_HOSTS_SSHD" ssh ssh-keygen unshare; do
    command -v "$tool" >/dev/null || {
      echo "$tool is not installed (apt-get install openssh-server openssh-client)"; return 1
    }
  done
}

ssh_hosts_require() {
  local why
  why=$(ssh_hosts_check) && return 0
  if [[ ${CI:-} == true ]]; then
    echo "FAIL: ssh cluster tests cannot run under CI=true: $why" >&2; exit 1
  fi
  echo "SKIP: ssh cluster tests: $why" >&2; exit 77
}

ssh_host_name() { echo "${SSH_HOSTS_PREFIX}$1"; }

_sh_check_host() {
  if [[ ! $1 =~ ^[0-9]+$ ]] || (($1 >= SSH_HOSTS_N)); then
    _sh_log "no ssh host $1 ($SSH_HOSTS_N up)"; return 1
  fi
}

# Folders of runs whose owner is gone (their servers went with their namespaces).
_sh_sweep() {
  local d pid
  for d in "${TMPDIR:-/tmp}"/accel-ssh-*; do
    [[ -d $d && $d =~ accel-ssh-([0-9]+)\.[^/]*$ ]] || continue
    pid=${BASH_REMATCH[1]}
    [[ $pid == "$CLUSTER_OWNER" ]] || _cl_alive "$pid" || rm -rf "$d"
  done
}

_sh_write_sshd_config() {
  local k=$1 d=$SSH_HOSTS_DIR use_pam=no
  # Without PAM, sshd refuses every login of an account whose password is locked ("!" in
  # /etc/shadow: "User root not allowed because account is locked"), keys included. Debian's
  # images have "*" (no password, not locked); where root's is locked, PAM is the way in.
  if [[ $(awk -F: '$1 == "root" { print $2 }' /etc/shadow 2>/dev/null) == '!'* &&
        -f /etc/pam.d/sshd ]]; then
    use_pam=yes
  fi
  # sshd runs a command as `bash -c CMD`, and Debian's bash then reads ~/.bashrc when SSH_CLIENT
  # is set and it is a top-level shell (SHLVL unset): the machine's own (a pyenv init on the
  # machine this was written on: 0.2 s a login, another python3 first on PATH). SHLVL=1 from the
  # server makes the remote bash level 2, which reads nothing.
  local rc_line='SetEnv SHLVL=1'
  [[ ${SSH_HOSTS_BASHRC:-} != 1 ]] || rc_line='# SSH_HOSTS_BASHRC=1: root'"'"'s ~/.bashrc is read'
  cat >"$d/sshd_config.h$k" <<EOF
# host $k ($(ssh_host_name "$k")), written by tests/cluster/ssh_hosts.sh
ListenAddress $(host_addr "$k"):22
HostKey $d/host_ed25519_key
PidFile $d/sshd-h$k.pid
AuthorizedKeysFile $d/authorized_keys
AuthorizedPrincipalsFile none
StrictModes no
UsePAM $use_pam
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
HostbasedAuthentication no
PermitEmptyPasswords no
X11Forwarding no
AllowAgentForwarding no
PermitUserEnvironment no
PrintMotd no
PrintLastLog no
UseDNS no
LogLevel VERBOSE
MaxStartups 256
MaxSessions 20
LoginGraceTime 20
$rc_line
Subsystem sftp internal-sftp
EOF
}

_sh_write_client_configs() {
  local d=$SSH_HOSTS_DIR key name k
  for key in id_ed25519:ssh_config bad_ed25519:ssh_config_bad; do
    cat >"$d/${key#*:}" <<EOF
# written by tests/cluster/ssh_hosts.sh; ssh -F reads this file only (no ~/.ssh, no /etc/ssh)
Host *
  User root
  IdentityFile $d/${key%%:*}
  IdentitiesOnly yes
  IdentityAgent none
  PreferredAuthentications publickey
  PasswordAuthentication no
  KbdInteractiveAuthentication no
  UserKnownHostsFile $d/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  UpdateHostKeys no
  CheckHostIP no
  HashKnownHosts no
  BatchMode yes
  ConnectTimeout 5
  # The default key exchange (sntrup761x25519, post-quantum) costs 0.13 s of CPU a login here.
  KexAlgorithms curve25519-sha256,curve25519-sha256@libssh.org
  ControlMaster no
  ControlPath none
  ForwardAgent no
  ForwardX11 no
  LogLevel ERROR
EOF
  done
  : >"$d/known_hosts"
  for ((k = 0; k < SSH_HOSTS_N; k++)); do
    name=$(ssh_host_name "$k")
    echo "$name,$(host_addr "$k") $(cut -d' ' -f1,2 "$d/host_ed25519_key.pub")" >>"$d/known_hosts"
  done
}

# Host k's server in the background (this shell's child: on_host_bg, never in $(...)).
_sh_start() {
  local k=$1
  # unshare (no --fork) and sh exec in turn, so the PID is sshd's own.
  # shellcheck disable=SC2016  # $1 and $@ are the inner sh's
  on_host_bg "$k" unshare --uts -- sh -c 'echo "$1" >/proc/sys/kernel/hostname && shift && exec "$@"' \
    sh "$(ssh_host_name "$k")" "$SSH_HOSTS_SSHD" -D -e -f "$SSH_HOSTS_DIR/sshd_config.h$k" \
    </dev/null >>"$SSH_HOSTS_DIR/sshd-h$k.log" 2>&1
  SSH_HOSTS_PIDS[k]=$CLUSTER_LAST_PID
}

# Waits until host k's server logs that it listens; 1 if it died or DEADLINE ($EPOCHREALTIME
# seconds, integer part) passed.
_sh_wait_listening() {
  local k=$1 deadline=$2
  local log=$SSH_HOSTS_DIR/sshd-h$k.log pid=${SSH_HOSTS_PIDS[$1]} want
  want="Server listening on $(host_addr "$k") port 22"
  # Each start appends; only the lines after the last "starting" count.
  until grep -qF "$want" < <(tac "$log" 2>/dev/null | sed '/^ssh_hosts: starting/q'); do
    if ! _sh_alive "$pid"; then _sh_log "host $k's sshd exited"; return 1; fi
    if ((${EPOCHREALTIME%.*} >= deadline)); then _sh_log "host $k's sshd does not listen"; return 1; fi
    sleep 0.01
  done
}

# One login from host 0 to host k by name (resolution, host key, client key). Retries until
# DEADLINE; the last attempt's error goes to stderr.
_sh_wait_login() {
  local k=$1 deadline=$2 name err
  name=$(ssh_host_name "$k")
  while ! err=$(on_host 0 ssh -F "$SSH_HOSTS_CONFIG" "$name" true 2>&1 </dev/null); do
    if ((${EPOCHREALTIME%.*} >= deadline)); then
      _sh_log "no login from host 0 to $name: $err"; return 1
    fi
    sleep 0.05
  done
}

# Prints every server's log and removes everything (the caller then returns 1).
_sh_fail_up() {
  local k
  for ((k = 0; k < SSH_HOSTS_N; k++)); do
    echo "---- sshd log of host $k ($SSH_HOSTS_DIR/sshd-h$k.log) ----" >&2
    cat "$SSH_HOSTS_DIR/sshd-h$k.log" >&2 2>/dev/null || true
  done
  ssh_hosts_down
}

ssh_hosts_up() {
  local n=$1 k deadline pids=() pid bad=0 d
  SSH_HOSTS_PREFIX=${2:-node}
  ((SSH_HOSTS_N == 0)) || { _sh_log "ssh_hosts_up: already up"; return 1; }
  if [[ ! $n =~ ^[0-9]+$ ]] || ((n < 1 || n > CLUSTER_N)); then
    _sh_log "ssh_hosts_up: 1..$CLUSTER_N hosts (cluster_up first), not $n"; return 1
  fi
  ssh_hosts_check >&2 || return 1
  _sh_sweep
  d=$(mktemp -d "${TMPDIR:-/tmp}/accel-ssh-${CLUSTER_OWNER}.XXXXXX") || return 1
  export SSH_HOSTS_DIR=$d
  export SSH_HOSTS_CONFIG=$d/ssh_config
  export SSH_HOSTS_KEY=$d/id_ed25519
  export SSH_HOSTS_BAD_KEY=$d/bad_ed25519
  export SSH_HOSTS_ARGS="-F $d/ssh_config"
  export SSH_HOSTS_BAD_ARGS="-F $d/ssh_config_bad"
  SSH_HOSTS_N=$n
  SSH_HOSTS_NAMES=() SSH_HOSTS_PIDS=()
  deadline=$((${EPOCHREALTIME%.*} + ${SSH_HOSTS_TIMEOUT:-10}))
  # Key files are written 0600, as both sides insist.
  if ! { ssh-keygen -q -t ed25519 -N '' -C accel-ssh-host -f "$d/host_ed25519_key" </dev/null &&
          ssh-keygen -q -t ed25519 -N '' -C accel-ssh-client -f "$SSH_HOSTS_KEY" </dev/null &&
          ssh-keygen -q -t ed25519 -N '' -C accel-ssh-refused -f "$SSH_HOSTS_BAD_KEY" </dev/null &&
          cp "$SSH_HOSTS_KEY.pub" "$d/authorized_keys"; }; then
    _sh_fail_up; return 1
  fi
  # The privilege separation folder (the pre-auth child's chroot): root's, not group/world
  # writable. The package makes it at boot (tmpfiles.d), which a container never ran.
  if [[ ! -d /run/sshd ]]; then mkdir -p /run/sshd && chmod 0755 /run/sshd; fi
  _sh_write_client_configs
  for ((k = 0; k < n; k++)); do
    SSH_HOSTS_NAMES+=("$(ssh_host_name "$k")")
    cluster_names "$k" "$(ssh_host_name "$k")" || { _sh_fail_up; return 1; }
    _sh_write_sshd_config "$k"
    echo "ssh_hosts: starting sshd of host $k" >>"$d/sshd-h$k.log"
    _sh_start "$k"
  done
  for ((k = 0; k < n; k++)); do
    _sh_wait_listening "$k" "$deadline" || { _sh_fail_up; return 1; }
  done
  # One login per host, all at once. The subshells are not on_host_bg jobs: they end here.
  for ((k = 0; k < n; k++)); do
    _sh_wait_login "$k" "$deadline" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || bad=1; done
  ((bad == 0)) || { _sh_fail_up; return 1; }
}

# Stops the listener PID (TERM, then KILL) and waits for it (it is this shell's child); drops it
# from the cluster's list of background jobs, so cluster_down never signals a reused PID.
_sh_stop_pid() {
  local pid=$1 i p keep=()
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do _sh_alive "$pid" || break; sleep 0.02; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  for p in "${CLUSTER_BG_PIDS[@]}"; do [[ $p == "$pid" ]] || keep+=("$p"); done
  CLUSTER_BG_PIDS=("${keep[@]}")
}

ssh_host_stop() {
  local k=$1 pid
  _sh_check_host "$k" || return 1
  pid=${SSH_HOSTS_PIDS[k]:-}
  [[ -n $pid ]] || return 0
  _sh_stop_pid "$pid"
  SSH_HOSTS_PIDS[k]=
}

ssh_host_start() {
  local k=$1 deadline
  _sh_check_host "$k" || return 1
  [[ -z ${SSH_HOSTS_PIDS[k]:-} ]] || { _sh_log "host $k's sshd is running"; return 1; }
  deadline=$((${EPOCHREALTIME%.*} + ${SSH_HOSTS_TIMEOUT:-10}))
  echo "ssh_hosts: starting sshd of host $k" >>"$SSH_HOSTS_DIR/sshd-h$k.log"
  _sh_start "$k"
  _sh_wait_listening "$k" "$deadline" || { cat "$SSH_HOSTS_DIR/sshd-h$k.log" >&2; return 1; }
}

# Session sshds: every sshd in a host that is not a listener (also those a stopped listener left).
ssh_hosts_session_pids() {
  local k pid comm listeners=" ${SSH_HOSTS_PIDS[*]} "
  for ((k = 0; k < SSH_HOSTS_N; k++)); do
    while read -r pid; do
      comm=$(cat "/proc/$pid/comm" 2>/dev/null) || continue
      [[ $comm == sshd && $listeners != *" $pid "* ]] && _sh_alive "$pid" && echo "$pid"
    done < <(ip netns pids "$(host_ns "$k")" 2>/dev/null)
  done
  return 0
}

ssh_hosts_wait_sessions_gone() {
  local limit=${1:-10} end left
  end=$(( ${EPOCHREALTIME%.*} + limit ))
  while left=$(ssh_hosts_session_pids) && [[ -n $left ]]; do
    if ((${EPOCHREALTIME%.*} >= end)); then
      _sh_log "ssh sessions still open after ${limit} s:"
      # shellcheck disable=SC2086  # one PID a word
      ps -o pid=,ppid=,args= -p "$(echo $left | tr ' ' ,)" >&2 || true
      return 1
    fi
    sleep 0.05
  done
}

ssh_hosts_down() {
  local k pid all=() tree
  if ((SSH_HOSTS_N > 0)); then
    # The trees first (listener, sessions, their commands), then the orphaned sessions.
    for pid in "${SSH_HOSTS_PIDS[@]}"; do
      [[ -n $pid ]] || continue
      mapfile -t tree < <(_sh_tree "$pid")
      all+=("${tree[@]}")
    done
    while read -r pid; do
      mapfile -t tree < <(_sh_tree "$pid")
      all+=("${tree[@]}")
    done < <(ssh_hosts_session_pids)
    ((${#all[@]} == 0)) || kill -TERM "${all[@]}" 2>/dev/null || true
    for pid in "${SSH_HOSTS_PIDS[@]}"; do [[ -z $pid ]] || _sh_stop_pid "$pid"; done
    for pid in "${all[@]}"; do
      for ((k = 0; k < 50; k++)); do _sh_alive "$pid" || break; sleep 0.02; done
      kill -KILL "$pid" 2>/dev/null || true
    done
  fi
  [[ -z ${SSH_HOSTS_DIR:-} ]] || rm -rf "$SSH_HOSTS_DIR"
  unset SSH_HOSTS_DIR SSH_HOSTS_CONFIG SSH_HOSTS_KEY SSH_HOSTS_BAD_KEY SSH_HOSTS_ARGS SSH_HOSTS_BAD_ARGS
  SSH_HOSTS_N=0
  SSH_HOSTS_NAMES=()
  SSH_HOSTS_PIDS=()
}
