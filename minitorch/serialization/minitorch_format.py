"""minitorch's own file format: a zip of JSON and raw bytes, no pickle.

PyTorch's ``torch.save`` pickles objects, and unpickling a file can run any
code its author wanted (PyTorch's ``weights_only`` mode and
:mod:`~minitorch.serialization.torch_format` restrict what it may do).  This
format holds only data, so reading it never involves code at all:

A file is a zip archive with three kinds of members::

    minitorch.json        {"format": "minitorch", "version": 1, "storages": [...]}
    data.json             the object tree (dicts, lists, numbers, strings, tensors)
    storages/<k>.bin      the raw bytes of storage k (little-endian)

In the tree a tensor is ``{"__tensor__": {"storage": k, "dtype": "float32",
"shape": [...], "stride": [...], "offset": n, ...}}``.  Tensors that shared a
storage when saved point to the same ``k`` and share one after loading, so a
view and its base stay a view and its base.

``load`` checks the magic and version, that every dtype is known, that each
storage's declared byte size matches its dtype and the manifest *before*
reading it, and that every tensor's shape, stride and offset stay inside its
storage.

The tree encoding (:class:`TreeEncoder`, :class:`TreeDecoder`) is shared with
:mod:`~minitorch.serialization.safetensors`, which stores a whole training
checkpoint's non-tensor parts as this same JSON in its metadata.
"""

from __future__ import annotations

import json
import math
import zipfile
from collections import OrderedDict
from typing import Any, Callable

import numpy as np

from ..device import as_device
from ..dtype import dtype as dtype_cls
from ..storage import UntypedStorage
from ..tensor import Tensor
from .archive import SafeZip, write_atomically
from .common import (DTYPES, MAX_DEPTH, check_count, fail, from_bytes,
                     make_storage, make_tensor, target_device, to_bytes)

__all__ = ["save", "load", "FORMAT_VERSION", "TreeEncoder", "TreeDecoder", "MAX_JSON_BYTES",
           "parse_json"]

FORMAT_NAME = "minitorch"
FORMAT_VERSION = 1
# The manifest and the tree: a state dict takes ~200 bytes of JSON a tensor, so 16 MB is
# 80,000 tensors; the limit bounds the Python objects json.loads can make (~30 bytes each
# a byte of JSON).
MAX_JSON_BYTES = 16 << 20


# ---------------------------------------------------------------------------
# The object tree, as JSON
# ---------------------------------------------------------------------------
class TreeEncoder:
    """Turns an object (tensors, numbers, strings, dtypes, nested containers) into JSON values.

    ``tensor(t, path)`` says what a tensor becomes; ``path`` names where it
    sits (``"model.fc1.weight"``), for formats that name tensors.
    """

    def __init__(self, tensor: Callable[[Tensor, str], Any]) -> None:
        self.tensor = tensor

    def encode(self, obj: Any, path: str = "", depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise ValueError("minitorch.save: object nesting is too deep")
        if isinstance(obj, Tensor):
            return self.tensor(obj, path)
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
            return {"__tuple__": [self.encode(v, _join(path, i), depth + 1)
                                  for i, v in enumerate(obj)]}
        if isinstance(obj, list):
            return [self.encode(v, _join(path, i), depth + 1) for i, v in enumerate(obj)]
        if isinstance(obj, dict):
            items = [[self.encode(k, path, depth + 1), self.encode(v, _join(path, k), depth + 1)]
                     for k, v in obj.items()]
            kind = "ordered" if isinstance(obj, OrderedDict) else "dict"
            return {"__dict__": items, "kind": kind}
        if obj.__class__.__name__ == "device" and hasattr(obj, "type"):
            return {"__device__": str(obj)}
        raise TypeError(f"minitorch.save cannot store objects of type {type(obj).__name__}: "
                        "save tensors, numbers, strings, and dicts/lists/tuples of them "
                        "(for modules and optimizers, save their state_dict())")


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


class TreeDecoder:
    """The inverse of :class:`TreeEncoder`, for untrusted JSON: anything unexpected is an error.

    ``tensor(meta)`` turns a ``{"__tensor__": meta}`` node into a tensor.
    """

    def __init__(self, source: str, tensor: Callable[[Any], Tensor]) -> None:
        self.source = source
        self.tensor = tensor

    def decode(self, node: Any, depth: int = 0) -> Any:
        src = self.source
        if depth > MAX_DEPTH:
            raise fail(src, "object nesting is too deep")
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.decode(v, depth + 1) for v in node]
        if not isinstance(node, dict) or len(node) == 0:
            raise fail(src, f"unexpected value {_short(node)} in the object tree")
        if "__tensor__" in node:
            return self.tensor(node["__tensor__"])
        if "__tuple__" in node:
            return tuple(self.decode(v, depth + 1) for v in self._list(node["__tuple__"]))
        if "__dict__" in node:
            out: dict = OrderedDict() if node.get("kind") == "ordered" else {}
            for pair in self._list(node["__dict__"]):
                if not isinstance(pair, list) or len(pair) != 2:
                    raise fail(src, "malformed dict entry in the object tree")
                key = self.decode(pair[0], depth + 1)
                try:
                    hash(key)
                except TypeError:
                    raise fail(src, "unhashable dict key in the object tree") from None
                out[key] = self.decode(pair[1], depth + 1)
            return out
        if "__float__" in node:
            text = node["__float__"]
            if text not in ("nan", "inf", "-inf"):
                raise fail(src, f"bad float {_short(text)}")
            return float(text)
        if "__dtype__" in node:
            name = node["__dtype__"]
            if not isinstance(name, str) or name not in DTYPES:
                raise fail(src, f"unknown dtype {_short(name)}")
            return DTYPES[name]
        if "__device__" in node:
            try:
                return as_device(str(node["__device__"]))
            except (TypeError, ValueError, RuntimeError):
                raise fail(src, f"bad device {_short(node['__device__'])}") from None
        raise fail(src, f"unknown object tag {_short(list(node)[0])}")

    def _list(self, v: Any) -> list:
        if not isinstance(v, list):
            raise fail(self.source, "malformed object tree (expected a list)")
        return v


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_json(raw: bytes, source: str, what: str) -> Any:
    """JSON from a file: any failure (bad UTF-8, syntax, nesting too deep) is one line."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as e:
        raise fail(source, f"{what} is not valid JSON ({str(e)[:100]})") from None


# ---------------------------------------------------------------------------
# save
# ---------------------------------------------------------------------------
def save(obj: Any, f: Any) -> None:
    """Write ``obj`` to ``f`` (a path, written atomically, or a writable binary file object)."""
    storages: dict = {}       # id(UntypedStorage) -> (index, storage)

    def tensor(t: Tensor, path: str) -> dict:
        st = t._storage
        entry = storages.get(id(st))
        if entry is None:
            entry = storages[id(st)] = (len(storages), st, t.dtype)
        return {"__tensor__": {
            "storage": entry[0], "dtype": t.dtype.name, "shape": list(t._shape),
            "stride": list(t._stride), "offset": t._offset,
            "requires_grad": bool(t._requires_grad),
            "parameter": bool(getattr(t, "_is_param", False)), "device": str(t.device)}}

    tree = TreeEncoder(tensor).encode(obj)
    blobs = []
    for index, st, dt in sorted(storages.values(), key=lambda e: e[0]):
        data = st._data if isinstance(st._data, np.ndarray) else st._data.copy_to_host()
        # The storage's own dtype: a bfloat16 tensor's storage holds float32 slots, saved as
        # they are (this format predates bfloat16 files; PyTorch's and safetensors' use 2 bytes).
        blobs.append((index, st.dtype.name, to_bytes(data, st.dtype)))
    manifest = {"format": FORMAT_NAME, "version": FORMAT_VERSION,
                "storages": [{"index": i, "dtype": d, "nbytes": len(b)} for i, d, b in blobs]}

    def write(stream: Any) -> None:
        with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED) as z:
            z.writestr("minitorch.json", json.dumps(manifest))
            z.writestr("data.json", json.dumps(tree, allow_nan=False))
            for i, _, b in blobs:
                z.writestr(f"storages/{i}.bin", b)

    write_atomically(f, write)


# ---------------------------------------------------------------------------
# load
# ---------------------------------------------------------------------------
def load(archive: SafeZip, map_location: Any) -> Any:
    """Read the object in an opened minitorch archive (see :func:`minitorch.load`)."""
    src = archive.source
    manifest = parse_json(archive.read("minitorch.json", limit=MAX_JSON_BYTES,
                                       what="minitorch.json"), src, "minitorch.json")
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise fail(src, "not a minitorch file (bad magic in minitorch.json)")
    version = manifest.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or not \
            1 <= version <= FORMAT_VERSION:
        raise fail(src, f"unsupported format version {_short(version)} (this minitorch reads "
                        f"versions 1..{FORMAT_VERSION})")
    declared = _declared_storages(src, manifest.get("storages", []))
    tree = parse_json(archive.read("data.json", limit=MAX_JSON_BYTES, what="data.json"), src,
                      "data.json")
    loaded: dict = {}

    def storage(index: int, device: str) -> UntypedStorage:
        key = (index, device)
        if key not in loaded:
            if index not in declared:
                raise fail(src, f"a tensor refers to storage {index}, which the manifest does "
                                "not list")
            dt, nbytes = declared[index]
            raw = archive.read(f"storages/{index}.bin", expected=nbytes,
                               what=f"storage {index}")
            loaded[key] = make_storage(from_bytes(raw, dt),
                                       target_device(device, map_location, src))
        return loaded[key]

    def tensor(meta: Any) -> Tensor:
        if not isinstance(meta, dict):
            raise fail(src, "malformed tensor entry")
        name = meta.get("dtype")
        if not isinstance(name, str) or name not in DTYPES:
            raise fail(src, f"a tensor has unknown dtype {_short(name)}")
        device = meta.get("device", "cpu")
        if not isinstance(device, str):
            raise fail(src, f"a tensor has device {_short(device)}")
        st = storage(check_count(src, meta.get("storage"), "a tensor's storage index"), device)
        return make_tensor(src, st, DTYPES[name], meta.get("shape"), meta.get("stride"),
                           meta.get("offset"), bool(meta.get("requires_grad", False)),
                           bool(meta.get("parameter", False)))

    return TreeDecoder(src, tensor).decode(tree)


def _declared_storages(src: str, entries: Any) -> dict:
    """``{index: (dtype, nbytes)}`` from the manifest, every field checked."""
    if not isinstance(entries, list):
        raise fail(src, "the manifest's storage list is malformed")
    declared = {}
    for s in entries:
        if not isinstance(s, dict) or s.get("dtype") not in DTYPES:
            raise fail(src, f"invalid storage entry {_short(s)} in the manifest")
        index = check_count(src, s.get("index"), "a storage index")
        nbytes = check_count(src, s.get("nbytes"), f"storage {index}'s byte count")
        dt = DTYPES[s["dtype"]]
        width = 2 if dt.name == "bfloat16" else dt.itemsize
        if nbytes % width:
            raise fail(src, f"storage {index} declares {nbytes} bytes, not a whole number of "
                            f"{dt.name} elements")
        if index in declared:
            raise fail(src, f"the manifest lists storage {index} twice")
        declared[index] = (dt, nbytes)
    return declared

