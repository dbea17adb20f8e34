"""Zip archives read defensively, and files written atomically.

Both minitorch's format and PyTorch's are zip archives.  A zip file is
entries (a local header, then the data, stored or compressed) and a central
directory at the end listing every entry with its name, method, compressed
size and *declared* uncompressed size.  Python's :mod:`zipfile` reads it, but
trusts it: a "zip bomb" declares (or really expands to) gigabytes from a few
kilobytes.  :class:`SafeZip` adds the checks a loader of untrusted files needs:

* only the two methods PyTorch and minitorch use: stored (0) and deflate (8);
* names are relative paths inside the archive (no ``/x``, ``..``, ``C:``,
  backslashes), and no name appears twice;
* entries do not overlap (many entries sharing one compressed stream is
  another way to make a bomb);
* before reading an entry, its declared size is compared with what the
  caller expects (the bytes a tensor's shape and dtype need) and with what
  its compressed bytes could possibly hold: a stored entry is exactly its
  compressed size, and deflate never expands more than 1032 times;
* entries are read in chunks into a buffer of the declared size, so reading
  stops there whatever the compressed stream holds.

Nothing is ever extracted to disk.
"""

from __future__ import annotations

import os
import tempfile
import zipfile
import zlib
import struct
from typing import Any, Callable

import numpy as np

from .common import fail

__all__ = ["SafeZip", "ZIP_ERRORS", "write_atomically", "MAX_DEFLATE_RATIO"]

# deflate's largest expansion: a 258-byte match costs at least 2 bits, ~1032:1.
MAX_DEFLATE_RATIO = 1032
_CHUNK = 1 << 20
# Everything zipfile and zlib raise on a damaged archive (a bit flip in a header can
# surface as any of these).
ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError,
              ValueError, struct.error, OverflowError, NotImplementedError, UnicodeError,
              IndexError, KeyError)


class SafeZip:
    """A zip archive opened for reading with the checks above; use as a context manager."""

    def __init__(self, f: Any, source: str) -> None:
        self.source = source
        try:
            self.z = zipfile.ZipFile(f if not isinstance(f, (str, os.PathLike))
                                     else os.fspath(f), "r")
            self.archive_size = self._size(self.z.fp)
            infos = self.z.infolist()
        except ZIP_ERRORS as e:
            raise fail(source, f"not a readable zip archive: the file is truncated or corrupted "
                               f"({_one_line(e)})") from None
        self.entries: dict = {}
        for info in infos:
            name = info.filename
            if _unsafe(name):
                raise fail(source, f"the archive holds an entry named {name!r}, outside the "
                                   "archive or not a plain relative path")
            if name in self.entries:
                raise fail(source, f"the archive holds two entries named {name!r}")
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise fail(source, f"entry {name!r} uses zip compression method "
                                   f"{info.compress_type}; only stored (0) and deflate (8) "
                                   "are read")
            if info.flag_bits & 0x1:
                raise fail(source, f"entry {name!r} is encrypted")
            self.entries[name] = info
        self._check_no_overlap(infos)

    def _check_no_overlap(self, infos: list) -> None:
        """Each entry's bytes end before the next entry starts.

        A "non-recursive" zip bomb points many directory entries at the same
        compressed bytes, so that N entries expand to N times 1032 times the
        file.  (A local header is at least 30 bytes plus the name.)
        """
        spans = sorted(infos, key=lambda i: i.header_offset)
        ends = [i.header_offset for i in spans[1:]] + [getattr(self.z, "start_dir",
                                                               self.archive_size)]
        for info, end in zip(spans, ends):
            if info.header_offset + 30 + len(info.orig_filename) + info.compress_size > end:
                raise fail(self.source, f"entry {info.filename!r} overlaps the next one in the "
                                        "archive (a zip bomb?)")

    @staticmethod
    def _size(fp: Any) -> int:
        here = fp.tell()
        end = fp.seek(0, os.SEEK_END)
        fp.seek(here)
        return end

    def names(self) -> list:
        """The entries' names, in archive order."""
        return list(self.entries)

    def size(self, name: str) -> int:
        """The declared (uncompressed) size of entry ``name``."""
        return self.entries[name].file_size

    def read(self, name: str, expected: int | None = None, limit: int | None = None,
             what: str = "") -> bytes:
        """The bytes of entry ``name``, after checking its declared size.

        ``expected``: the exact size the caller knows it must have (a
        storage's bytes).  ``limit``: the most the caller accepts (a
        manifest).  Raises :class:`~minitorch.serialization.common.SerializationError`
        for a missing entry, a size that disagrees, or damaged data.
        """
        label = what or repr(name)
        info = self.entries.get(name)
        if info is None:
            raise fail(self.source, f"{label} is missing from the archive")
        declared = info.file_size
        if expected is not None and declared != expected:
            raise fail(self.source, f"{label} holds {declared} bytes, but its shape and dtype "
                                    f"need {expected}")
        if limit is not None and declared > limit:
            raise fail(self.source, f"{label} declares {declared} bytes, more than the "
                                    f"{limit} accepted")
        if info.compress_size > self.archive_size:
            raise fail(self.source, f"{label} claims {info.compress_size} compressed bytes in "
                                    f"a {self.archive_size}-byte file")
        if info.compress_type == zipfile.ZIP_STORED and declared != info.compress_size:
            raise fail(self.source, f"{label} is stored uncompressed but declares {declared} "
                                    f"bytes in {info.compress_size}")
        if declared > MAX_DEFLATE_RATIO * info.compress_size + 64:
            raise fail(self.source, f"{label} declares {declared} bytes from "
                                    f"{info.compress_size} compressed bytes, more than deflate "
                                    "can expand (a zip bomb?)")
        buf = np.empty(declared, np.uint8)
        try:
            with self.z.open(info) as stream:
                pos = 0
                while pos < declared:
                    chunk = stream.read(min(_CHUNK, declared - pos))
                    if not chunk:
                        break
                    buf[pos:pos + len(chunk)] = np.frombuffer(chunk, np.uint8)
                    pos += len(chunk)
                # Reading on to the end lets zipfile check the CRC (a flipped bit shows here).
                extra = stream.read(1)
        except ZIP_ERRORS as e:
            raise fail(self.source, f"{label} is truncated or corrupted ({_one_line(e)})") \
                from None
        if pos != declared or extra:
            raise fail(self.source, f"{label} holds a different number of bytes than the "
                                    f"{declared} it declares")
        return buf.tobytes()

    def close(self) -> None:
        self.z.close()

    def __enter__(self) -> "SafeZip":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _unsafe(name: str) -> bool:
    """A name that is not a plain relative path inside the archive."""
    if not name or name.startswith(("/", "\\")) or "\\" in name or "\x00" in name:
        return True
    parts = name.split("/")
    return any(p in ("..", ".") for p in parts) or (len(parts[0]) >= 2 and parts[0][1] == ":")


def _one_line(e: BaseException) -> str:
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    return text[:200]


def write_atomically(f: Any, write: Callable[[Any], None]) -> None:
    """Call ``write(stream)``; for a path, into a temporary file renamed over it when complete.

    A crash or a full disk mid-write then never leaves a half-written file
    where a good one was (the rename is atomic on POSIX and Windows).
    """
    if not isinstance(f, (str, os.PathLike)):
        write(f)
        return
    path = os.fspath(f)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".minitorch-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        # mkstemp makes the file private (0600); give it the permissions open() would.
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
