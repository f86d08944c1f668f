# shellcheck shell=bash
# host_init.sh HOST ETC_DIR SCRIPT -- PID 1 of one test "host" of
# slurm_cluster.sh. Started by unshare in a fresh UTS, mount and PID namespace
# (network namespace already entered by nsenter). Not meant to be run by hand.
#
# It makes the host look like a machine of its own, then runs SCRIPT (the
# host's daemons) and stays PID 1 until SCRIPT ends, reaping every orphan
# (slurmstepd daemonises; its children are reparented here). When this
# process ends the kernel kills whatever is left in the host.
set -u
host=$1 etc=$2 script=$3

hostname "$host"                                   # gethostname() == NodeName
mount --bind "$etc/hosts" /etc/hosts               # ctl, h0, h1, ... resolve
# No DNS: the machine's nameserver cannot be reached from the test subnet, and
# a lookup that falls through to it (getent hosts h0 asks for IPv6 first)
# would hang 10 s. With no nameserver, glibc fails at once.
mount --bind "$etc/resolv.conf" /etc/resolv.conf
# SL_PROCTRACK=cgroup (cgroup v1 machines): this host's own subtree of the
# machine's freezer hierarchy, bound where slurmd looks for it, so that
# proctrack/cgroup of two slurmds never shares a cgroup. Made by slurm_up.
if [ "${SL_PROCTRACK:-linuxproc}" = cgroup ] && [ -d "${SL_FREEZER:-}-$host" ]; then
  mount --bind "$SL_FREEZER-$host" /sys/fs/cgroup/freezer
fi
echo "host $host up: pid $$ in its namespace, $(hostname), $(ip -4 -o addr show dev eth0 | awk '{print $4}')"

bash "$script" &
main=$!
# A signal to PID 1 from outside is only delivered when handled: pass TERM on.
trap 'kill -TERM "$main" 2>/dev/null' TERM
# `wait` reaps any child, adopted orphans included; leave when SCRIPT is done.
while kill -0 "$main" 2>/dev/null; do wait "$main"; done
echo "host $host: main script ended"
