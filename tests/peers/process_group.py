# SPDX-License-Identifier: Apache-2.0
# process_group.py - the peers' checks start launchers (accel, accelerate, torchrun) in a session
# of their own and, when one runs past its time, kill that whole process group, so a hung
# launcher leaves no worker behind (a plain subprocess timeout kills the launcher only).
import os
import signal
import subprocess


def start(command, **kwargs):
    return subprocess.Popen(command, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kwargs)


def finish(process, timeout):
    """(returncode, stdout, stderr); after `timeout` s the group is killed and returncode is None."""
    try:
        out, err = process.communicate(timeout=timeout)
        return process.returncode, out, err
    except subprocess.TimeoutExpired:
        kill(process)
        out, err = process.communicate()
        return None, out, err + f"\n[killed after {timeout} s: {' '.join(process.args)}]"


def kill(process):
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run(command, timeout, **kwargs):
    return finish(start(command, **kwargs), timeout)
