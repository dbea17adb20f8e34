"""Layer 11: ``save`` and ``load`` without pickle.

PyTorch's ``torch.save`` pickles objects, and unpickling a file can run any
code its author wanted.  minitorch's format holds only data, so loading an
untrusted file can at worst raise an error:

A file is a zip archive with three kinds of members::

    minitorch.json        {"format": "minitorch", "version": 1}
    data.json             the object tree (dicts, lists, numbers, strings, tensors)
    storages/<k>.bin      the raw bytes of storage k (little-endian)

In the tree a tensor is ``{"__tensor__": {"storage": k, "dtype": "float32",
"shape": [...], "stride": [...], "offset": n, ...}}``.  Tensors that shared a
storage when saved point to the same ``k`` and share one after loading, so a
view and its base stay a view and its base.

``load`` checks the magic and version, that every dtype is known, that each
storage's byte size matches its dtype, and that every tensor's shape, stride
and offset stay inside its storage.  ``save`` writes to a temporary file in
the same directory and renames it over the target, so a crash mid-write never
leaves a half-written file where a good one was.
"""

from __future__ import annotations

import io
import json
import math
import os
import tempfile
import zipfile
from collections import OrderedDict
from typing import Any

import numpy as np

from ..device import as_device
from ..dtype import ALL_DTYPES, dtype as dtype_cls
from ..layout import storage_span
from ..storage import UntypedStorage
from ..tensor import Tensor
from .. import cuda
from ..backends import get_backend
from ..nn.parameter import Parameter

__all__ = ["save", "load", "FORMAT_VERSION"]

FORMAT_NAME = "minitorch"
FORMAT_VERSION = 1
_DTYPES = {d.name: d for d in ALL_DTYPES}
_MAX_DEPTH = 200


# ---------------------------------------------------------------------------
# save
# ---------------------------------------------------------------------------
class _Writer:
    def __init__(self) -> None:
        self.storages: dict = {}       # id(UntypedStorage) -> (index, storage)

    def encode(self, obj: Any, depth: int = 0) -> Any:
        if depth > _MAX_DEPTH:
            raise ValueError("minitorch.save: object nesting is too deep")
        if isinstance(obj, Tensor):
            return self._tensor(obj)
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, (int, np.integer)):
            return int(obj)
        if isinstance(obj, (float, np.floating)):
            f = float(obj)
            return f if math.isfinite(f) else {"__float__": repr(f)}
        if isinstance(obj, dtype_cls):
            return {"__dtype__": obj.name}
        if isinstance(obj, tuple):
            return {"__tuple__": [self.encode(v, depth + 1) for v in obj]}
        if isinstance(obj, list):
            return [self.encode(v, depth + 1) for v in obj]
        if isinstance(obj, dict):
            items = [[self.encode(k, depth + 1), self.encode(v, depth + 1)]
                     for k, v in obj.items()]
            kind = "ordered" if isinstance(obj, OrderedDict) else "dict"
            return {"__dict__": items, "kind": kind}
        if obj.__class__.__name__ == "device" and hasattr(obj, "type"):
            return {"__device__": str(obj)}
        raise TypeError(f"minitorch.save cannot store objects of type {type(obj).__name__}: "
                        "save tensors, numbers, strings, and dicts/lists/tuples of them "
                        "(for modules and optimizers, save their state_dict())")

    def _tensor(self, t: Tensor) -> dict:
        st = t._storage
        entry = self.storages.get(id(st))
        if entry is None:
            entry = self.storages[id(st)] = (len(self.storages), st)
        return {"__tensor__": {
            "storage": entry[0], "dtype": t.dtype.name, "shape": list(t._shape),
            "stride": list(t._stride), "offset": t._offset,
            "requires_grad": bool(t._requires_grad), "parameter": bool(getattr(t, "_is_param",
                                                                               False)),
            "device": str(t.device)}}


def save(obj: Any, f: Any, pickle_module: Any = None, pickle_protocol: Any = None,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Save ``obj`` (tensors, numbers, strings, nested dicts/lists/tuples) to ``f``.

    ``f`` is a path or a writable binary file object.
    """
    writer = _Writer()
    tree = writer.encode(obj)
    storages = []
    for index, st in sorted(writer.storages.values(), key=lambda e: e[0]):
        data = st._data if isinstance(st._data, np.ndarray) else st._data.copy_to_host()
        storages.append((index, st.dtype.name, np.ascontiguousarray(data).astype(
            data.dtype.newbyteorder("<"), copy=False).tobytes()))
    manifest = {"format": FORMAT_NAME, "version": FORMAT_VERSION,
                "storages": [{"index": i, "dtype": d, "nbytes": len(b)} for i, d, b in storages]}

    def write(stream: Any) -> None:
        with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED) as z:
            z.writestr("minitorch.json", json.dumps(manifest))
            z.writestr("data.json", json.dumps(tree, allow_nan=False))
            for i, _, b in storages:
                z.writestr(f"storages/{i}.bin", b)

    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        directory = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".minitorch-", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as stream:
                write(stream)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(tmp, path)       # atomic on POSIX and Windows
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    else:
        write(f)


# ---------------------------------------------------------------------------
# load
# ---------------------------------------------------------------------------
class _Reader:
    def __init__(self, z: zipfile.ZipFile, manifest: dict, map_location: Any) -> None:
        self.z = z
        self.map_location = map_location
        self.declared = {}
        for s in manifest.get("storages", []):
            if not isinstance(s, dict) or s.get("dtype") not in _DTYPES:
                raise RuntimeError(f"minitorch.load: invalid storage entry {s!r}")
            self.declared[int(s["index"])] = s
        self.storages: dict = {}

    def storage(self, index: int, device: str) -> UntypedStorage:
        key = (index, device)
        if key in self.storages:
            return self.storages[key]
        if index not in self.declared:
            raise RuntimeError(f"minitorch.load: tensor refers to missing storage {index}")
        meta = self.declared[index]
        dt = _DTYPES[meta["dtype"]]
        name = f"storages/{index}.bin"
        try:
            info = self.z.getinfo(name)
        except KeyError:
            raise RuntimeError(f"minitorch.load: storage {index} is missing from the file") \
                from None
        if info.file_size != meta["nbytes"] or info.file_size % dt.itemsize:
            raise RuntimeError(f"minitorch.load: storage {index} has {info.file_size} bytes, "
                               f"expected {meta['nbytes']} for dtype {dt.name}")
        raw = self.z.read(name)
        data = np.frombuffer(raw, dtype=dt.np.newbyteorder("<")).astype(dt.np).copy()
        target = self._target_device(device)
        if target.type != "cpu":
            data = get_backend(target).from_host(data)
        st = UntypedStorage(data, target)
        self.storages[key] = st
        return st

    def _target_device(self, saved: str) -> Any:
        loc = self.map_location
        if loc is None:
            dev = as_device(saved)
        elif isinstance(loc, dict):
            dev = as_device(loc.get(saved, saved))
        elif callable(loc):
            result = loc(None, saved)
            dev = as_device(saved if result is None else
                            (result if not isinstance(result, UntypedStorage) else "cpu"))
        else:
            dev = as_device(loc)
        if dev.type == "cuda":
            if not cuda.is_available():
                raise RuntimeError(
                    "Attempting to deserialize object on a CUDA device but "
                    "minitorch.cuda.is_available() is False. If you are running on a CPU-only "
                    "machine, please use minitorch.load with map_location='cpu' to map your "
                    "storages to the CPU.")
        return dev

    def decode(self, node: Any, depth: int = 0) -> Any:
        if depth > _MAX_DEPTH:
            raise RuntimeError("minitorch.load: object nesting is too deep")
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.decode(v, depth + 1) for v in node]
        if not isinstance(node, dict) or len(node) == 0:
            raise RuntimeError(f"minitorch.load: unexpected value {node!r}")
        if "__tensor__" in node:
            return self._tensor(node["__tensor__"])
        if "__tuple__" in node:
            return tuple(self.decode(v, depth + 1) for v in _list(node["__tuple__"]))
        if "__dict__" in node:
            out = OrderedDict() if node.get("kind") == "ordered" else {}
            for pair in _list(node["__dict__"]):
                if not isinstance(pair, list) or len(pair) != 2:
                    raise RuntimeError("minitorch.load: malformed dict entry")
                key = self.decode(pair[0], depth + 1)
                try:
                    hash(key)
                except TypeError:
                    raise RuntimeError("minitorch.load: unhashable dict key") from None
                out[key] = self.decode(pair[1], depth + 1)
            return out
        if "__float__" in node:
            text = node["__float__"]
            if text not in ("nan", "inf", "-inf"):
                raise RuntimeError(f"minitorch.load: bad float {text!r}")
            return float(text)
        if "__dtype__" in node:
            name = node["__dtype__"]
            if name not in _DTYPES:
                raise RuntimeError(f"minitorch.load: unknown dtype {name!r}")
            return _DTYPES[name]
        if "__device__" in node:
            return as_device(str(node["__device__"]))
        raise RuntimeError(f"minitorch.load: unknown object tag {list(node)[0]!r}")

    def _tensor(self, meta: Any) -> Tensor:
        if not isinstance(meta, dict):
            raise RuntimeError("minitorch.load: malformed tensor entry")
        name = meta.get("dtype")
        if name not in _DTYPES:
            raise RuntimeError(f"minitorch.load: unknown dtype {name!r}")
        dt = _DTYPES[name]
        shape, stride = _ints(meta.get("shape")), _ints(meta.get("stride"))
        offset = meta.get("offset")
        if (len(shape) != len(stride) or not isinstance(offset, int) or isinstance(offset, bool)
                or offset < 0 or any(s < 0 for s in shape) or any(s < 0 for s in stride)):
            raise RuntimeError(f"minitorch.load: invalid tensor geometry shape={shape} "
                               f"stride={stride} offset={offset}")
        st = self.storage(_int(meta.get("storage")), str(meta.get("device", "cpu")))
        if st.dtype.np != dt.np:          # (a bfloat16 tensor's storage holds float32 slots)
            raise RuntimeError(f"minitorch.load: tensor of dtype {dt.name} refers to a "
                               f"storage of dtype {st.dtype.name}")
        _, hi = storage_span(shape, stride, offset)
        if hi > st._data.shape[0]:
            raise RuntimeError(f"minitorch.load: tensor with shape {shape}, stride {stride} "
                               f"and offset {offset} does not fit in its storage of "
                               f"{st._data.shape[0]} elements")
        t = Tensor._make(st, shape, stride, offset, dt)
        if meta.get("parameter"):
            return Parameter(t, bool(meta.get("requires_grad", True)))
        if meta.get("requires_grad"):
            t.requires_grad_(True)
        return t


def _list(v: Any) -> list:
    if not isinstance(v, list):
        raise RuntimeError("minitorch.load: expected a list")
    return v


def _int(v: Any) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise RuntimeError(f"minitorch.load: expected an integer, got {v!r}")
    return v


def _ints(v: Any) -> tuple:
    return tuple(_int(x) for x in _list(v))


def load(f: Any, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: Any = None, **kwargs: Any) -> Any:
    """Load what ``save`` wrote; ``map_location`` moves tensors ('cpu', a dict, a function)."""
    try:
        z = zipfile.ZipFile(f if not isinstance(f, (str, os.PathLike)) else os.fspath(f), "r")
    except zipfile.BadZipFile as e:
        raise RuntimeError(f"minitorch.load: not a minitorch file, or the file is truncated or "
                           f"corrupted ({e})") from None
    with z:
        try:
            manifest = json.loads(z.read("minitorch.json"))
            tree = json.loads(z.read("data.json"))
        except KeyError as e:
            raise RuntimeError(f"minitorch.load: not a minitorch file (missing {e})") from None
        except (zipfile.BadZipFile, ValueError, OSError, EOFError) as e:
            raise RuntimeError(f"minitorch.load: the file is truncated or corrupted ({e})") \
                from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
            raise RuntimeError("minitorch.load: not a minitorch file (bad magic)")
        version = manifest.get("version")
        if not isinstance(version, int) or version > FORMAT_VERSION or version < 1:
            raise RuntimeError(f"minitorch.load: unsupported format version {version!r} "
                               f"(this minitorch reads versions 1..{FORMAT_VERSION})")
        reader = _Reader(z, manifest, map_location)
        try:
            return reader.decode(tree)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
            raise RuntimeError(f"minitorch.load: the file is truncated or corrupted ({e})") \
                from None
