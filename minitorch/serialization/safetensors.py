"""safetensors files: the format the field shares weights in, read and written.

A safetensors file is an 8-byte little-endian header length ``N``, ``N``
bytes of JSON, then the tensors' bytes back to back::

    {"fc.weight": {"dtype": "F32", "shape": [3, 2], "data_offsets": [0, 24]},
     "fc.bias":   {"dtype": "F32", "shape": [3],    "data_offsets": [24, 36]},
     "__metadata__": {"format": "pt"}}

It holds a flat ``{name: tensor}`` dict and string metadata, no code and no
pickle.  Parsing and validating it (offsets inside the file, sizes matching
shape and dtype, no overlaps, a header under 100 MB) is done by the
``safetensors`` package's Rust core, the reference implementation; this
module converts between its bytes and minitorch tensors, and mirrors
``safetensors.torch``'s API::

    from minitorch.serialization.safetensors import save_file, load_file
    save_file(model.state_dict(), "model.safetensors")
    model.load_state_dict(load_file("model.safetensors"))

As ``safetensors.torch.save_file`` does, saving refuses tensors that share
memory (``RuntimeError``: save each once, or ``.clone()`` one) and tensors
that are not contiguous (``ValueError``: call ``.contiguous()``).

``minitorch.save(obj, "x.safetensors")`` also stores objects that are not a
flat dict (a training checkpoint: weights, optimizer state, counters):
tensors are named by their place in the object (``model.fc.weight``,
``optimizer.state.0.exp_avg``) and the rest of the object is stored as JSON
in the metadata entry ``minitorch.tree`` (see :func:`save_object`).  Other
readers see the tensors; ``minitorch.load`` rebuilds the whole object.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

import numpy as np

from ..tensor import Tensor
from .archive import write_atomically
from .common import (DTYPES, SerializationError, fail, from_bytes, make_storage, make_tensor,
                     source_name, target_device, to_bytes)
from .minitorch_format import TreeDecoder, TreeEncoder, parse_json

__all__ = ["save", "save_file", "load", "load_file", "save_object", "load_object",
           "looks_like_safetensors", "TREE_KEY"]

TREE_KEY = "minitorch.tree"
# safetensors' dtype codes for minitorch's dtypes.
_CODES = {"float64": "F64", "float32": "F32", "float16": "F16", "bfloat16": "BF16",
          "int64": "I64", "int32": "I32", "int16": "I16", "int8": "I8", "uint8": "U8",
          "bool": "BOOL"}
_FROM_CODE = {code: DTYPES[name] for name, code in _CODES.items()}


def _lib() -> Any:
    try:
        import safetensors
    except ImportError:
        raise ImportError("safetensors files need the safetensors package: pip install "
                          "safetensors") from None
    return safetensors


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------
def _check_tensors(tensors: Any) -> None:
    """safetensors.torch's checks, with its messages: a dict of dense tensors, none shared."""
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    by_storage: dict = {}
    for k, v in tensors.items():
        if not isinstance(k, str):
            raise ValueError(f"Key `{k!r}` is invalid, expected a str")
        if not isinstance(v, Tensor):
            raise ValueError(f"Key `{k}` is invalid, expected torch.Tensor but received "
                             f"{type(v)}")
        if v.numel() > 0:
            by_storage.setdefault(id(v._storage), []).append(k)
    failing = []
    for names in by_storage.values():
        # Tensors of one storage share memory when their element ranges overlap.
        spans = sorted((tensors[n]._offset, tensors[n]._offset + tensors[n].numel(), n)
                       for n in names)
        group: list = []
        end = -1
        for lo, hi, n in spans:
            if lo < end:
                group.append(n)
            else:
                if len(group) > 1:
                    failing.append(set(group))
                group = [n]
            end = max(end, hi)
        if len(group) > 1:
            failing.append(set(group))
    if failing:
        raise RuntimeError(
            "Some tensors share memory, this will lead to duplicate memory on disk and "
            f"potential differences when loading them again: {failing}. A potential way to "
            "correctly save your model is to use `save_model`. More information at "
            "https://huggingface.co/docs/safetensors/torch_shared_tensors")
    for k, v in tensors.items():
        if not v.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{k}` which is not allowed. "
                "It either means you are trying to save tensors which are reference of each "
                "other in which case it's recommended to save only the full tensors, and "
                "reslice at load time, or simply call `.contiguous()` on your tensor to pack "
                "it before saving.")


def _specs(tensors: dict, keep_alive: list) -> dict:
    """``{name: TensorSpec}`` for safetensors' serializer (it reads the bytes at data_ptr)."""
    spec = _lib().TensorSpec
    out = {}
    for k, v in tensors.items():
        t = v.detach().cpu()
        n = t.numel()
        flat = t._storage._data[t._offset:t._offset + n]
        buf = np.frombuffer(to_bytes(flat, t.dtype), np.uint8) if n else np.zeros(1, np.uint8)
        keep_alive.append(buf)
        out[k] = spec(dtype=t.dtype.name, shape=list(t._shape), data_ptr=buf.ctypes.data,
                      data_len=len(buf) if n else 0)
    return out


def _check_metadata(metadata: Any) -> None:
    if metadata is not None and (not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise ValueError("metadata must be a dict of str to str (safetensors stores text only)")


def save(tensors: dict, metadata: dict | None = None) -> bytes:
    """The safetensors bytes of ``tensors`` (a ``{name: Tensor}`` dict).

    As ``safetensors.torch.save``: ``metadata`` is a dict of strings.
    """
    _check_tensors(tensors)
    _check_metadata(metadata)
    keep: list = []
    return bytes(_lib().serialize(_specs(tensors, keep), metadata=metadata))


def save_file(tensors: dict, filename: str | os.PathLike, metadata: dict | None = None
              ) -> None:
    """Write ``tensors`` to ``filename`` in safetensors format, as ``safetensors.torch.save_file``.

    The file is written atomically (a temporary file renamed into place).
    """
    data = save(tensors, metadata)
    write_atomically(filename, lambda stream: stream.write(data))


def save_object(obj: Any, f: Any) -> None:
    """Write any object ``minitorch.save`` accepts as a safetensors file (see the module notes).

    A flat ``{str: Tensor}`` dict is written as a plain safetensors file
    (metadata ``{"format": "pt"}``, as Hugging Face's libraries expect).
    """
    if isinstance(obj, dict) and obj and all(isinstance(k, str) and isinstance(v, Tensor)
                                             for k, v in obj.items()):
        tensors, metadata = dict(obj), {"format": "pt"}
    else:
        tensors = {}

        def tensor(t: Tensor, path: str) -> dict:
            name, n = path or "tensor", 1
            while name in tensors:              # "a.b" from {"a": {"b"}} and {"a.b"}: unique
                n += 1
                name = f"{path}#{n}"
            tensors[name] = t
            return {"__tensor__": {"name": name, "requires_grad": bool(t._requires_grad),
                                   "parameter": bool(getattr(t, "_is_param", False))}}

        tree = TreeEncoder(tensor).encode(obj)
        metadata = {"format": "pt", TREE_KEY: json.dumps(tree, allow_nan=False)}
    data = save(tensors, metadata)
    write_atomically(f, lambda stream: stream.write(data))


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------
def looks_like_safetensors(head: bytes) -> bool:
    """Whether the first bytes of a file look like a safetensors header (a length, then '{')."""
    return len(head) >= 9 and head[8:9] == b"{" and \
        struct.unpack("<Q", head[:8])[0] >= 2


def _parse(data: bytes, source: str) -> tuple:
    """``({name: (dtype, shape, bytes)}, metadata)``, validated by the safetensors package."""
    lib = _lib()
    try:
        entries = lib.deserialize(data)
    except Exception as e:               # noqa: BLE001  (SafetensorError and friends)
        raise fail(source, f"not a valid safetensors file ({_first_line(e)})") from None
    # deserialize has checked the header; read it once more for the metadata it omits.
    n = struct.unpack("<Q", data[:8])[0]
    header = parse_json(data[8:8 + n], source, "the safetensors header")
    metadata = header.get("__metadata__") if isinstance(header, dict) else None
    if metadata is not None and not (isinstance(metadata, dict) and all(
            isinstance(v, str) for v in metadata.values())):
        raise fail(source, "the safetensors metadata is not a dict of strings")
    out = {}
    for name, info in entries:
        code = info["dtype"]
        if code not in _FROM_CODE:
            raise fail(source, f"tensor {name!r} has dtype {code}, which minitorch does not have")
        out[name] = (_FROM_CODE[code], tuple(info["shape"]), info["data"])
    return out, metadata or {}


def _first_line(e: BaseException) -> str:
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    return text[:160]


def _tensors(parsed: dict, source: str, device: Any) -> dict:
    out = {}
    for name, (dt, shape, raw) in parsed.items():
        data = from_bytes(raw, dt)
        storage = make_storage(data, target_device("cpu", device, source))
        strides, acc = [], 1
        for size in reversed(shape):
            strides.append(acc)
            acc *= size
        out[name] = make_tensor(source, storage, dt, shape, tuple(reversed(strides)), 0)
    return out


def load_object(data: bytes, source: str, map_location: Any = None) -> Any:
    """What :func:`save_object` wrote: the whole object, or the ``{name: Tensor}`` dict."""
    parsed, metadata = _parse(data, source)
    tensors = _tensors(parsed, source, map_location)
    if TREE_KEY not in metadata:
        return tensors
    tree = parse_json(metadata[TREE_KEY].encode(), source, f"the {TREE_KEY} metadata")

    def tensor(meta: Any) -> Tensor:
        if not isinstance(meta, dict) or meta.get("name") not in tensors:
            raise fail(source, f"the object tree refers to a tensor the file does not hold "
                               f"({str(meta)[:60]})")
        t = tensors[meta["name"]]
        requires_grad = bool(meta.get("requires_grad", False))
        return make_tensor(source, t._storage, t.dtype, t._shape, t._stride, 0,
                           requires_grad, bool(meta.get("parameter", False)))

    return TreeDecoder(source, tensor).decode(tree)


def load(data: bytes) -> dict:
    """The ``{name: Tensor}`` dict in safetensors bytes, as ``safetensors.torch.load``."""
    parsed, _ = _parse(bytes(data), "<bytes>")
    return _tensors(parsed, "<bytes>", None)


def load_file(filename: str | os.PathLike, device: Any = "cpu") -> dict:
    """The ``{name: Tensor}`` dict in a safetensors file, on ``device``.

    As ``safetensors.torch.load_file``; a damaged file raises
    :class:`~minitorch.serialization.common.SerializationError` naming it.
    """
    source = source_name(filename)
    try:
        with open(filename, "rb") as f:
            data = f.read()
    except OSError as e:
        raise SerializationError(source, f"cannot read it ({e.strerror or e})") from None
    parsed, _ = _parse(data, source)
    return _tensors(parsed, source, device)

