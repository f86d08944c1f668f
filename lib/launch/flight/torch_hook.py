# SPDX-License-Identifier: Apache-2.0
# accel's flight recorder hook for PyTorch workers (docs/diagnose.md): the sitecustomize module
# of a folder the launcher puts first on the workers' PYTHONPATH. It does nothing until the program
# imports torch.distributed: then it starts torch's own worker server on the Unix socket
# ACCEL_FR_SOCKET names (C++, its own thread; its "Server listening" line is kept off the
# program's stderr, anything else written there meanwhile is kept), which answers torch's
# fr_trace_json (and on GPUs dump_nccl_trace_json) without the GIL, and adds a handler,
# accel_fr_pickle, for torch's pickle dump (fr_trace reads those; torch 2.15's Gloo one needs its
# process groups keyed as its entries name them, done here). Then it runs the
# sitecustomize that was next on the path, as Python would have. Nothing else of the program's
# changes: no output, no thread of Python's, no import it did not make.
import importlib.abc
import importlib.machinery
import os
import sys

_ACCEL_SOCKET = os.environ.get("ACCEL_FR_SOCKET", "")
_accel_server = None


def _accel_pickle(request, response):
    import pickle

    from torch._C._distributed_c10d import _dump_fr_trace

    raw = _dump_fr_trace()
    try:
        dump = pickle.loads(raw)
        config = dump.get("pg_config", {})
        if "" in config:
            # torch 2.15's Gloo recorder keys its group "" here but names it by pg_id in the
            # entries, and fr_trace then fails (KeyError ('0', 0)): keyed as the entries name it.
            unnamed = config.pop("")
            for entry in dump.get("entries", []):
                name, desc = entry["process_group"]
                config.setdefault(name, {"name": name, "desc": desc, "ranks": unnamed.get("ranks", "[]")})
            raw = pickle.dumps(dump)
    except Exception:
        pass
    response.set_content(raw, "application/octet-stream")
    response.set_status(200)


def _accel_start():
    global _accel_server
    from torch._C._distributed_c10d import _WorkerServer, _register_handler

    try:  # a socket an earlier round's worker left: torch's server will not bind over it
        os.unlink(_ACCEL_SOCKET)
    except OSError:
        pass
    # Its "Server listening" line goes to fd 2 while the server starts: fd 2 is a pipe for that
    # moment, and whatever else came (another thread of the program's) is written back after. The
    # pipe is drained without waiting for its end: a process started meanwhile may hold it.
    saved = os.dup(2)
    read_end, write_end = os.pipe()
    os.dup2(write_end, 2)
    os.close(write_end)
    try:
        _accel_server = _WorkerServer(_ACCEL_SOCKET)
        _register_handler("accel_fr_pickle", _accel_pickle)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.set_blocking(read_end, False)
        said = b""
        try:
            while True:
                chunk = os.read(read_end, 65536)
                if not chunk:
                    break
                said += chunk
        except BlockingIOError:
            pass
        os.close(read_end)
        others = b"".join(l for l in said.splitlines(True) if b"Server listening" not in l)
        try:
            if others:
                os.write(2, others)
        except OSError:
            pass


class _AccelWatch(importlib.abc.MetaPathFinder):
    """Starts the server once torch.distributed's c10d module has run."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch.distributed.distributed_c10d":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            try:
                _accel_start()
            except Exception:  # an older torch, a socket that cannot be made: the program goes on
                pass

        spec.loader.exec_module = exec_module
        return spec


def _accel_chain():
    """The sitecustomize that comes after this one on sys.path, run as Python would have."""
    here = os.path.dirname(os.path.abspath(__file__))
    for folder in sys.path:
        if not folder or os.path.abspath(folder) == here:
            continue
        path = os.path.join(folder, "sitecustomize.py")
        if os.path.isfile(path):
            with open(path, "rb") as f:
                code = compile(f.read(), path, "exec")
            exec(code, {"__name__": "sitecustomize", "__file__": path})
            return


if _ACCEL_SOCKET:
    sys.meta_path.insert(0, _AccelWatch())
_accel_chain()
