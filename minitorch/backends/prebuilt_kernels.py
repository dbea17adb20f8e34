"""Kernels compiled ahead of time and shipped with the package: a first run that starts at once.

Numba compiles a kernel the first time it is called and keeps the machine
code in its disk cache, so the second run of a program compiles nothing.
The *first* run on a fresh machine, though, compiled LeNet's kernels for
about a minute before the first training step.  This module ships that
machine code: ``tools/prebuild_kernels.py`` compiles the kernels of the
README's commands (``minitorch train mnist``, ``evaluate``, ``predict``,
``train xor``), and of the ops the test suite calls, for a baseline CPU and
packs their Numba cache files into ``backends/prebuilt/kernels-<cpu>.tar.xz``.
When a kernel is not in the machine's own cache, :func:`load` looks for it
there before Numba compiles.

**Which CPU.**  Numba compiles for the machine it runs on, and files each
kernel under that CPU's name and features: code that uses an instruction
another CPU lacks would crash there.  The archive is compiled for
:data:`CPU`, the ``x86-64-v3`` level (AVX2 and FMA: Intel since 2013, AMD
since 2015), and is used only on a CPU that has every one of
:data:`FEATURES`.  Elsewhere (an older CPU, an ARM machine) nothing
changes: kernels compile as before.  A kernel loaded from the archive is
as fast as one compiled for the machine, give or take the few instructions
a newer CPU adds.

**Never stale.**  A kernel is filed in the archive under its stamp, the
hash of the code it is built from (:mod:`~minitorch.backends.kernel_cache`),
exactly as in a cache shared by content.  A kernel whose code was edited
(a student's task, a change to a shared body) has another stamp, is not
found, and compiles as usual.  The archive also records the Python, Numba
and llvmlite versions it was built with; with any other, it is not used.

**Where it is unpacked.**  Once per archive, into
``$MINITORCH_CACHE_DIR`` or ``~/.cache/minitorch`` (a folder named after a
hash of the manifest and the archive's size), safely (``tarfile``'s ``data``
filter: no path outside the folder, no links).  ``MINITORCH_PREBUILT_KERNELS=0``
switches all of this off (the build tool does, so that it compiles everything itself);
``MINITORCH_PREBUILT_ARCHIVE`` names another archive (:data:`ARCHIVE_ENV`).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import sys
import tarfile
import tempfile
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any

#: The CPU the archive is compiled for (``NUMBA_CPU_NAME``; its features are the level's own).
CPU = "x86-64-v3"
#: What a CPU needs to run the archive's code: the x86-64-v3 level, in LLVM's names.
FEATURES = frozenset({"avx", "avx2", "bmi", "bmi2", "cx16", "f16c", "fma", "lzcnt", "movbe",
                      "popcnt", "sahf", "sse3", "sse4.1", "sse4.2", "ssse3", "xsave"})
#: The archive, and the description of it written beside it by tools/prebuild_kernels.py.
FOLDER = Path(__file__).resolve().parent / "prebuilt"
ARCHIVE = FOLDER / f"kernels-{CPU}.tar.xz"


def manifest_of(archive: Path) -> Path:
    """An archive's manifest: beside it, ``.json`` for ``.tar.xz``."""
    return archive.with_name(archive.name.removesuffix(".tar.xz") + ".json")


MANIFEST = manifest_of(ARCHIVE)
#: Set to 0 to use no prebuilt kernel.
SWITCH_ENV = "MINITORCH_PREBUILT_KERNELS"
#: Names another archive to use instead of the package's (its manifest: :func:`manifest_of`).
#: The course's CI checks give it to the editions they build, which carry no archive: the
#: engine's kernels load there as in the reference, while a kernel built from a student's
#: code has a stamp of its own and compiles.
ARCHIVE_ENV = "MINITORCH_PREBUILT_ARCHIVE"


def _files() -> tuple:
    """The archive and its manifest: :data:`ARCHIVE_ENV`'s, else the package's."""
    named = os.environ.get(ARCHIVE_ENV)
    if named:
        return Path(named), manifest_of(Path(named))
    return ARCHIVE, MANIFEST


def versions() -> dict:
    """The versions a prebuilt kernel depends on (its Numba cache files are Numba's pickles)."""
    import llvmlite
    import numba
    return {"python": f"{sys.version_info[0]}.{sys.version_info[1]}",
            "numba": numba.__version__, "llvmlite": llvmlite.__version__,
            "machine": platform.machine()}


def cpu_fits() -> bool:
    """Does this CPU run :data:`CPU`'s code (every one of :data:`FEATURES`)?"""
    import llvmlite.binding as ll
    if platform.machine() not in ("x86_64", "AMD64"):
        return False
    try:
        host = ll.get_host_cpu_features()
    except RuntimeError:            # LLVM cannot tell: do not guess
        return False
    return FEATURES <= {name for name, on in host.items() if on}


@lru_cache(maxsize=None)
def folder() -> Path | None:
    """The unpacked archive, or None where it is not to be used (see the module's text)."""
    archive, manifest_file = _files()
    if os.environ.get(SWITCH_ENV, "1") == "0" or not archive.is_file() \
            or not manifest_file.is_file() or not hasattr(tarfile, "data_filter"):
        return None                 # (a Python without tarfile's safe filter: unpack nothing)
    try:
        manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if manifest.get("versions") != versions() or not cpu_fits():
        return None
    # Named after the manifest (each kernel's stamp and the versions) and the archive's size,
    # not a hash of the archive's megabytes: read in every process that looks up a kernel.
    digest = hashlib.sha256(manifest_file.read_bytes() + str(archive.stat().st_size).encode()
                            ).hexdigest()[:16]
    base = Path(os.environ.get("MINITORCH_CACHE_DIR")
                or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "minitorch")
    target = base / f"prebuilt-{CPU}-{digest}"
    if target.is_dir():
        return target
    try:
        base.mkdir(parents=True, exist_ok=True)
        # Unpacked beside its final place, then renamed: another process never sees half.
        partial = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=base))
        with tarfile.open(archive, "r:xz") as tar:
            tar.extractall(partial, filter="data")
        try:
            partial.rename(target)
        except OSError:             # another process was first: use its copy
            shutil.rmtree(partial, ignore_errors=True)
    except (OSError, tarfile.TarError) as e:
        warnings.warn(f"prebuilt kernels not used: cannot unpack {archive.name} into {base} "
                      f"({e}); the kernels compile on first use", RuntimeWarning, stacklevel=2)
        return None
    return target if target.is_dir() else None


def load(cache: Any, sig: Any, target_context: Any) -> Any:
    """The compiled kernel for ``sig`` from the archive, or None (then Numba compiles it).

    ``cache`` is the kernel's Numba cache (its locator is a
    :class:`~minitorch.backends.kernel_cache.KernelSourceLocator`, which
    knows the kernel's stamp); the archive's entry is looked up under the key
    Numba would use, with :data:`CPU` for this machine's CPU.
    """
    root = folder()
    where = getattr(cache._impl.locator, "content_path", None)
    if root is None or where is None:
        return None
    from numba.core.caching import IndexDataCacheFile
    entry = IndexDataCacheFile(str(root / where()), cache._impl.filename_base,
                               cache._impl.locator.get_source_stamp())
    sig_key, (triple, _, _), code_key = cache._index_key(sig, target_context.codegen())
    data = entry.load((sig_key, (triple, CPU, ""), code_key))
    return None if data is None else cache._impl.rebuild(target_context, data)
