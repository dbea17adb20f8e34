"""The default process group: who am I, how many are we, and how we talk (MPI).

A *process group* is the set of processes that take part in collectives.
``init_process_group(backend="mpi")`` makes the default one, holding every
process started by the MPI launcher (``mpiexec -n 4 python train.py``): the
launcher gives each process its **rank** (0 .. world_size-1) and MPI knows the
**world size**.  Nothing here moves bytes itself: every collective is an MPI
call through mpi4py, on a private duplicate of ``MPI.COMM_WORLD`` (so that a
program's own MPI traffic can never be mistaken for ours).

Two safety nets that PyTorch's MPI backend does not have, because a hung job
is the worst way for a distributed program to fail:

* an uncaught exception on any rank prints its traceback, then a line naming
  the rank, and calls ``MPI_Abort``, which ends every process of the job
  (otherwise the other ranks would wait forever in their next collective);
* every wait on a collective gives up after ``timeout`` (default 30 minutes,
  PyTorch's default) with a ``RuntimeError`` naming the operation and rank.
"""

from __future__ import annotations

import os
import sys
import threading
from datetime import timedelta
from typing import Any

__all__ = ["Backend", "ProcessGroup", "GroupMember", "group", "default_pg_timeout",
           "is_available", "is_mpi_available", "is_initialized", "init_process_group",
           "destroy_process_group", "get_rank", "get_world_size", "get_backend"]

#: How long a collective may wait for the other ranks before it fails (PyTorch's default).
default_pg_timeout = timedelta(minutes=30)

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to "
                    "call init_process_group.")

# Environment variables that launchers set to the rank and world size of a process:
# MPICH's Hydra (PMI_*), Open MPI (OMPI_COMM_WORLD_*), PMIx, Slurm, and torchrun-style.
_RANK_VARS = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID", "RANK")
_SIZE_VARS = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", "WORLD_SIZE")


class Backend(str):
    """The name of a communication backend; minitorch has one, ``"mpi"``."""

    MPI = "mpi"
    UNDEFINED = "undefined"

    def __new__(cls, name: str) -> "Backend":
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got "
                             f"{type(name)}")
        value = name.lower()
        if value in ("gloo", "nccl", "ucc", "xccl"):
            raise RuntimeError(f"minitorch.distributed has only the 'mpi' backend, not "
                               f"{name!r}: start the processes with mpiexec and call "
                               f"init_process_group(backend='mpi')")
        if value != "mpi":
            raise ValueError(f"Invalid backend: {name!r} (minitorch supports 'mpi')")
        return super().__new__(cls, value)


class ProcessGroup:
    """A set of ranks that run collectives together: an MPI communicator and a timeout.

    ``rank()`` and ``size()`` are this process's rank in the group and the
    number of processes, as on PyTorch's ``ProcessGroup``.
    """

    def __init__(self, comm: Any, timeout: timedelta) -> None:
        self._comm = comm
        self._rank = comm.Get_rank()
        self._size = comm.Get_size()
        self.timeout = timeout

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def name(self) -> str:
        return Backend.MPI

    def __repr__(self) -> str:
        return f"<ProcessGroup mpi rank={self._rank} size={self._size}>"


class GroupMember:
    """``GroupMember.WORLD`` is the default group once initialized (as in PyTorch)."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = -100


class group:  # noqa: N801  (PyTorch's name: ``dist.group.WORLD``)
    """``group.WORLD``: the default process group (``None`` before initialization)."""

    WORLD: ProcessGroup | None = None


def is_available() -> bool:
    """``True``: the package is always importable; the MPI backend may not be."""
    return True


def is_mpi_available() -> bool:
    """Can the MPI backend be used?  (Is mpi4py, and an MPI library under it, installed?)"""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def is_initialized() -> bool:
    """Has :func:`init_process_group` been called (and not yet destroyed)?"""
    return GroupMember.WORLD is not None


def _default_group() -> ProcessGroup:
    if GroupMember.WORLD is None:
        raise ValueError(_NOT_INITIALIZED)
    return GroupMember.WORLD


def _resolve(pg: Any) -> ProcessGroup:
    """The group a collective runs on: ``None`` and ``group.WORLD`` mean the default one."""
    if pg is None or pg is GroupMember.WORLD:
        return _default_group()
    if isinstance(pg, ProcessGroup):
        return pg
    raise TypeError(f"group must be a ProcessGroup or None, but got {type(pg).__name__}")


def _import_mpi() -> Any:
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError(
            "the MPI backend needs mpi4py and an MPI library: pip install "
            "'minitorch[distributed]' (it brings mpi4py and MPICH from PyPI)") from e
    return MPI


def _env_int(names: tuple) -> tuple[str, int] | None:
    """The first of the environment variables ``names`` that is set, as (name, value)."""
    for name in names:
        value = os.environ.get(name)
        if value is not None and value.strip() != "":
            try:
                return name, int(value)
            except ValueError:
                raise ValueError(f"environment variable {name}={value!r} is not an "
                                 f"integer") from None
    return None


def launcher_rank() -> int | None:
    """This process's rank as its launcher announced it (``mpiexec``, Slurm, or ``RANK``),
    read from the environment without starting MPI; ``None`` outside a launcher."""
    found = _env_int(_RANK_VARS)
    return None if found is None else found[1]


def launcher_world_size() -> int | None:
    """The number of processes the launcher started (``PMI_SIZE``, ``WORLD_SIZE``, ...)."""
    found = _env_int(_SIZE_VARS)
    return None if found is None else found[1]


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: timedelta | None = None, world_size: int = -1,
                       rank: int = -1, store: Any = None, group_name: str = "",
                       pg_options: Any = None, device_id: Any = None) -> None:
    """Join the default process group: every process the MPI launcher started.

    The rank and world size come from MPI.  ``RANK``/``WORLD_SIZE`` in the
    environment (set by some launchers and job scripts) and the ``rank``/
    ``world_size`` arguments are *checked* against MPI's: a disagreement means
    the processes were not started the way the script expects, and is an
    error rather than a silent mis-split of the data.  (PyTorch's MPI backend
    ignores the arguments with a warning; it never sees a mismatch.)

    ``init_method``, ``store``, ``group_name``, ``pg_options`` and
    ``device_id`` exist for PyTorch's signature; MPI's launcher already did
    the rendezvous they configure, so they are ignored.

    >>> import minitorch.distributed as dist
    >>> dist.is_initialized()
    False
    """
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    Backend(backend if backend is not None else "mpi")
    if timeout is None:
        timeout = default_pg_timeout
    if not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{type(timeout).__name__}")
    MPI = _import_mpi()
    comm = MPI.COMM_WORLD.Dup()
    pg = ProcessGroup(comm, timeout)
    _check_launcher(pg, rank, world_size)
    GroupMember.WORLD = group.WORLD = pg
    if pg.size() > 1:
        _install_abort_hooks(pg)


def _check_launcher(pg: ProcessGroup, rank: int, world_size: int) -> None:
    """Refuse a rank/world size that disagrees with MPI's (from arguments or environment)."""
    claims = []
    if rank != -1:
        claims.append(("rank", "the rank argument", rank, pg.rank()))
    if world_size != -1:
        claims.append(("world size", "the world_size argument", world_size, pg.size()))
    for what, names, real in (("rank", ("RANK",), pg.rank()),
                              ("world size", ("WORLD_SIZE",), pg.size())):
        found = _env_int(names)
        if found is not None:
            claims.append((what, f"environment variable {found[0]}", found[1], real))
    for what, source, claimed, real in claims:
        if claimed != real:
            hint = ""
            if pg.size() == 1:
                hint = (": this process is not part of an MPI job; start every process "
                        "with the launcher, e.g. mpiexec -n N python script.py")
            raise RuntimeError(f"{source} says the {what} is {claimed}, but MPI started this "
                               f"process as {what} {real}{hint}")


# -- the abort-on-exception safety net ---------------------------------------------
_previous_hooks: dict = {}


def _abort(pg: ProcessGroup, what: str) -> None:
    """Print why, then end every process of the job (MPI_Abort never returns)."""
    try:
        sys.stderr.write(
            f"minitorch.distributed: rank {pg.rank()} of {pg.size()} {what}; aborting all "
            f"{pg.size()} processes (MPI_Abort) so that the other ranks do not wait "
            f"forever in their next collective\n")
        sys.stderr.flush()
    finally:
        pg._comm.Abort(1)


def _install_abort_hooks(pg: ProcessGroup) -> None:
    """After an uncaught exception's traceback, abort the whole job instead of hanging."""
    prev_sys, prev_thread = sys.excepthook, threading.excepthook
    _previous_hooks["sys"], _previous_hooks["threading"] = prev_sys, prev_thread

    def sys_hook(exc_type: type, exc: BaseException, tb: Any) -> None:
        prev_sys(exc_type, exc, tb)
        if GroupMember.WORLD is pg:
            _abort(pg, f"raised {exc_type.__name__}: {exc}")

    def thread_hook(args: Any) -> None:
        prev_thread(args)
        if GroupMember.WORLD is pg and args.exc_type is not SystemExit:
            _abort(pg, f"raised {args.exc_type.__name__} in thread "
                       f"{getattr(args.thread, 'name', '?')}: {args.exc_value}")

    sys.excepthook, threading.excepthook = sys_hook, thread_hook


def _remove_abort_hooks() -> None:
    if "sys" in _previous_hooks:
        sys.excepthook = _previous_hooks.pop("sys")
        threading.excepthook = _previous_hooks.pop("threading")


def abort(message: str = "asked to abort") -> None:
    """End every process of the job now, after printing ``message`` with this rank.

    For a rank that must stop while the others may be inside a collective
    (an error it caught itself, ``sys.exit`` with a failure code).
    """
    _abort(_default_group(), message)


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Leave the default process group (frees its communicator; MPI itself stays up,
    so ``init_process_group`` may be called again)."""
    pg = _default_group() if group is None or group is GroupMember.WORLD else group
    if pg is not GroupMember.WORLD:
        raise ValueError("minitorch.distributed has only the default process group")
    _remove_abort_hooks()
    GroupMember.WORLD = globals()["group"].WORLD = None
    try:
        pg._comm.Free()
    except Exception:  # MPI already finalized at interpreter exit: nothing to free
        pass


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in ``group`` (0 .. world_size-1)."""
    return _resolve(group).rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """The number of processes in ``group``."""
    return _resolve(group).size()


def get_backend(group: ProcessGroup | None = None) -> str:
    """The backend of ``group``: always ``"mpi"``."""
    _resolve(group)
    return Backend.MPI

