"""Layer 11: ``save`` and ``load``, in minitorch's, PyTorch's and safetensors' formats.

Three formats, one pair of functions:

=================  ====================  =============================================
format             written for           holds
=================  ====================  =============================================
``"minitorch"``    ``.mt`` and others    any object of data; a zip of JSON and bytes
``"torch"``        ``.pt``, ``.pth``     the same, as ``torch.save`` writes it: PyTorch
                                         reads it with ``torch.load(weights_only=True)``
``"safetensors"``  ``.safetensors``      named tensors (and, from minitorch, the rest of
                                         the object as JSON metadata)
=================  ====================  =============================================

``save(obj, f)`` picks the format from ``f``'s extension (a file object gets
minitorch's), or from ``format=``.  ``load(f)`` recognises the format from
the file's first bytes, whatever its name.

Loading never runs code from the file and never trusts it: every size is
checked before memory is allocated for it, and anything wrong is one
:class:`SerializationError` (a ``RuntimeError``) naming the file.  See
docs/serialization.md.
"""

from __future__ import annotations

import io
import os
from typing import Any

from . import minitorch_format, safetensors, torch_format
from .archive import SafeZip
from .common import SerializationError, fail, source_name
from .minitorch_format import FORMAT_VERSION

__all__ = ["save", "load", "FORMAT_VERSION", "FORMATS", "format_for_path", "detect_format",
           "SerializationError", "safetensors"]

FORMATS = ("minitorch", "torch", "safetensors")
_EXTENSIONS = {".pt": "torch", ".pth": "torch", ".safetensors": "safetensors", ".mt": "minitorch"}
_ZIP_MAGIC = b"PK\x03\x04"
_EMPTY_ZIP = b"PK\x05\x06"
# An old (pre-1.6) torch.save: a bare pickle starting with PyTorch's magic number (a LONG1).
_LEGACY_TORCH = bytes.fromhex("80028a0a6cfc9c46f9206aa85019")


def format_for_path(path: Any) -> str:
    """The format ``save`` writes to ``path`` when none is given: by extension, else minitorch's.

    >>> format_for_path("model.pt"), format_for_path("w.safetensors"), format_for_path("run.mt")
    ('torch', 'safetensors', 'minitorch')
    """
    if not isinstance(path, (str, os.PathLike)):
        return "minitorch"
    return _EXTENSIONS.get(os.path.splitext(os.fspath(path))[1].lower(), "minitorch")


def save(obj: Any, f: Any, pickle_module: Any = None, pickle_protocol: Any = None,
         _use_new_zipfile_serialization: bool = True, *, format: str | None = None) -> None:
    """Save ``obj`` (tensors, numbers, strings, nested dicts/lists/tuples) to ``f``.

    ``f`` is a path (written atomically: a crash never leaves half a file
    where a good one was) or a writable binary file object.  ``format`` is
    ``"minitorch"``, ``"torch"`` or ``"safetensors"``; by default it follows
    the extension (:func:`format_for_path`).  ``pickle_module`` and
    ``pickle_protocol`` are accepted for PyTorch's signature and ignored:
    minitorch writes only data.
    """
    fmt = format or format_for_path(f)
    if fmt == "torch":
        torch_format.save(obj, f)
    elif fmt == "safetensors":
        safetensors.save_object(obj, f)
    elif fmt == "minitorch":
        minitorch_format.save(obj, f)
    else:
        raise ValueError(f"minitorch.save: unknown format {fmt!r}; use one of {FORMATS}")


def detect_format(head: bytes) -> str | None:
    """The format of a file from its first 16 bytes: ``"zip"``, ``"safetensors"``, or None."""
    if head.startswith((_ZIP_MAGIC, _EMPTY_ZIP)):
        return "zip"
    if safetensors.looks_like_safetensors(head):
        return "safetensors"
    return None


def load(f: Any, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: Any = None, **kwargs: Any) -> Any:
    """Load what ``save`` (or ``torch.save``, or a safetensors writer) wrote.

    The format is recognised from the file's contents.  ``map_location``
    moves tensors, as in ``torch.load``: a device or its name, a dict
    ``{saved: new}``, or a function ``(storage, location) -> device``.
    PyTorch files are read under ``weights_only`` rules whatever
    ``weights_only`` says: minitorch never runs code from a file.
    """
    source = source_name(f)
    if isinstance(f, (str, os.PathLike)):
        try:
            with open(f, "rb") as stream:
                return _load_stream(stream, source, map_location)
        except IsADirectoryError:
            raise SerializationError(source, "is a directory, not a file") from None
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    return _load_stream(f, source, map_location)


def _load_stream(stream: Any, source: str, map_location: Any) -> Any:
    start = stream.tell()
    head = stream.read(16)
    stream.seek(start)
    kind = detect_format(head)
    if kind == "safetensors":
        return safetensors.load_object(stream.read(), source, map_location)
    if kind == "zip":
        with SafeZip(stream, source) as archive:
            if "minitorch.json" in archive.entries:
                return minitorch_format.load(archive, map_location)
            if torch_format.is_torch_archive(archive):
                return torch_format.load(archive, map_location)
        raise fail(source, "a zip archive, but neither a minitorch nor a PyTorch file")
    if not head:
        raise fail(source, "the file is empty")
    if head.startswith(_LEGACY_TORCH):
        raise fail(source, "a PyTorch file in the legacy format of PyTorch < 1.6, which minitorch "
                           "does not read: load it in PyTorch and torch.save it again")
    raise fail(source, "not a minitorch, PyTorch or safetensors file (unknown first bytes "
                       f"{head[:8].hex()})")
