"""Launching real MPI jobs from the tests: ``run_mpi(n, script, *args)``.

Each distributed test starts ``mpiexec -n N python <test file> <worker>``: the
test file doubles as the program every rank runs (see their ``__main__``
blocks).  The job is bounded twice: ``MPIEXEC_TIMEOUT`` makes MPICH's
launcher kill every rank, and the subprocess timeout kills the launcher's
whole process group if even that fails, so that a broken test cannot leave
spinning processes behind.
"""

from __future__ import annotations

import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def find_mpiexec() -> str | None:
    """``mpiexec`` beside this Python (a virtual environment with the ``mpich`` wheel),
    else on ``PATH``."""
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.exists():
        return str(beside)
    return shutil.which("mpiexec")


def _missing() -> str | None:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed: pip install -e '.[distributed]'"
    if find_mpiexec() is None:
        return "no mpiexec found (beside python or on PATH): pip install -e '.[distributed]'"
    return None


MISSING = _missing()
requires_mpi = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


def start_mpi(n: int, script: str | Path, *args: str, timeout: int = 120,
              env: dict | None = None) -> subprocess.Popen:
    """Start ``mpiexec -n n python script args...`` (text pipes, its own session)."""
    full_env = dict(os.environ)
    full_env.update({"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
                     "MPIEXEC_TIMEOUT": str(timeout),
                     "PYTHONPATH": os.pathsep.join(filter(None, [
                         str(ROOT), os.environ.get("PYTHONPATH")]))})
    for var in ("RANK", "WORLD_SIZE"):       # a test run inside a job must not leak them
        full_env.pop(var, None)
    full_env.update(env or {})
    cmd = [find_mpiexec(), "-n", str(n), sys.executable, str(script), *args]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=full_env, cwd=str(ROOT), start_new_session=True)


def stop(proc: subprocess.Popen) -> None:
    """Kill a job started by :func:`start_mpi` (the launcher and every rank)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)


def wait_for_stderr(proc: subprocess.Popen, text: str, count: int, seconds: float) -> str:
    """Read ``proc``'s stderr until ``text`` has appeared ``count`` times; all of it so far.

    Reads the pipe's raw bytes (``os.read`` on its descriptor), never
    ``proc.stderr.readline()``: ``select`` reports only bytes still *in the
    pipe*, while a text-mode ``readline`` pulls a whole chunk into Python's
    buffer and returns one line of it.  When two ranks print "paused" at
    nearly the same moment (likely on a loaded machine, where this process
    wakes late), both lines arrive in one chunk, the second stays in the
    buffer, and ``select`` waits forever for a line that was already read.
    A job that exits, or closes stderr, before printing ``text`` fails the
    test at once, with what it printed.
    """
    fd = proc.stderr.fileno()
    raw, deadline = b"", time.monotonic() + seconds

    def seen() -> str:
        return raw.decode(errors="replace")
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while seen().count(text) < count:
            left = deadline - time.monotonic()
            if left <= 0:
                stop(proc)
                pytest.fail(f"never saw {text!r} {count} times in {seconds:g} s; "
                            f"stderr so far:\n{seen()}")
            if sel.select(timeout=min(left, 1.0)):
                chunk = os.read(fd, 65536)
                if not chunk:       # end of file: the job is over (or has closed stderr)
                    try:
                        proc.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        stop(proc)
                        proc.wait()
                    pytest.fail(f"the job exited (status {proc.returncode}) before printing "
                                f"{text!r} {count} times; stderr:\n{seen()}")
                raw += chunk
    return seen()


def run_mpi(n: int, script: str | Path, *args: str, timeout: int = 120,
            env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``mpiexec -n n python script args...``; the result has ``.elapsed`` seconds."""
    start = time.perf_counter()
    proc = start_mpi(n, script, *args, timeout=timeout, env=env)
    cmd = proc.args
    try:
        out, err = proc.communicate(timeout=timeout + 15)
    except subprocess.TimeoutExpired:
        stop(proc)
        out, err = proc.communicate()
        pytest.fail(f"mpiexec -n {n} {script} {args} hung past {timeout + 15} s:\n{out}\n{err}")
    result = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    result.elapsed = time.perf_counter() - start
    return result


def assert_ok(result: subprocess.CompletedProcess, n: int) -> None:
    """Every rank printed its ``OK`` line and the job exited cleanly."""
    report = f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.returncode == 0, report
    # (the launcher merges the ranks' output, so lines can interleave)
    assert sorted(int(r) for r in re.findall(r"OK rank (\d+)", result.stdout)) \
        == list(range(n)), report
