# SPDX-License-Identifier: Apache-2.0
# test_script_runner.py SCRIPT [ARGS...] - runs a Python program as `python SCRIPT ARGS` would
# (as __main__, its folder first on sys.path), then ends the process without the interpreter's
# finalization. `accel test` runs Accelerate's test script through it (apps/cmd_test.cc embeds
# this file), and so does the wheel's test: after a script that used torch's Gloo process group,
# Gloo's worker threads may still be dropping finished work that holds tensors while the
# interpreter finalizes, and a thread taking the GIL then aborts the rank ("terminate called
# without an active exception", pytorch/pytorch#190489) after every check has passed, whichever
# launcher started it. The exit status, output and tracebacks are the script's own.
import os
import runpy
import signal
import sys
import traceback

script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path[0] = os.path.dirname(os.path.abspath(script))
status = 0
try:
    runpy.run_path(script, run_name="__main__")
except SystemExit as end:
    if end.code is not None and not isinstance(end.code, int):
        print(end.code, file=sys.stderr)
    status = end.code if isinstance(end.code, int) else (0 if end.code is None else 1)
except KeyboardInterrupt:
    traceback.print_exc()
    sys.stderr.flush()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
except BaseException:
    traceback.print_exc()
    status = 1
sys.stdout.flush()
sys.stderr.flush()
os._exit(status)
