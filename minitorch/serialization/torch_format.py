"""PyTorch's file format (``torch.save``), read and written without importing torch.

Since PyTorch 1.6 ``torch.save`` writes a zip archive whose entries sit in
one folder (``archive/`` or the file's stem)::

    archive/data.pkl            the object, pickled (protocol 2)
    archive/data/0, data/1 ...  each storage's raw bytes
    archive/byteorder           "little" (or "big")
    archive/version, .format_version, .storage_alignment, .data/serialization_id

Pickle is a small stack machine: ``data.pkl`` is a program of opcodes that
push values, build lists and dicts, look up a global by name (``GLOBAL
torch._utils _rebuild_tensor_v2``) and call it (``REDUCE``).  That call is
why unpickling an untrusted file can run any code (``GLOBAL os system``).
A tensor is pickled as a call ``_rebuild_tensor_v2(storage, offset, size,
stride, requires_grad, hooks)``, where ``storage`` is a *persistent id*
(``BINPERSID``): a tuple ``("storage", torch.FloatStorage, key, location,
numel)`` that names the entry ``data/<key>`` instead of holding the bytes.

Reading follows PyTorch's ``torch.load(weights_only=True)`` rules:

1. :func:`_scan` walks the opcodes first (:mod:`pickletools`, which runs
   nothing) and refuses opcodes that make arbitrary objects (``INST``,
   ``OBJ``, ``NEWOBJ``, ``EXT*``, out-of-band buffers) and memo indices
   larger than the program (a memo slot of index 10**9 would make the
   unpickler allocate gigabytes);
2. :class:`RestrictedUnpickler` (a ``pickle.Unpickler`` with its
   ``find_class`` overridden) resolves only the globals of PyTorch's
   weights_only allowlist that minitorch can represent, each to a small
   function *here* that checks its arguments and returns an inert
   placeholder (a ``_TensorRef``, not a tensor); any other global is refused
   before anything is called;
3. :func:`_materialize` turns the placeholders into minitorch tensors,
   reading each storage's bytes once (so tensors that shared a storage share
   one again) after checking its declared size against its dtype and numel,
   and checking that every tensor fits in its storage.

The placeholders exist so that a hostile ``BUILD`` opcode (which sets
attributes on the object below it) can never reach a real tensor or dtype.

Writing emits the same opcodes by hand (:class:`_PickleWriter`), so that
``torch.load(f, weights_only=True)`` reads minitorch's files.
"""

from __future__ import annotations

import io
import pickle
import pickletools
import re
import struct
import zipfile
from collections import Counter, OrderedDict
from typing import Any

import numpy as np

from ..device import as_device
from ..dtype import dtype as dtype_cls
from ..storage import UntypedStorage
from ..tensor import Tensor
from ..tensor_base import Size
from .archive import SafeZip, write_atomically
from .common import (DTYPES, MAX_DEPTH, fail, from_bytes, make_storage, make_tensor,
                     target_device, to_bytes)

__all__ = ["save", "load", "is_torch_archive", "MAX_PICKLE_BYTES", "MAX_PICKLE_OPS"]

# A state dict's pickle takes ~200 bytes a tensor: 16 MB is 80,000 tensors.  Every opcode
# makes at most one Python object (~64 bytes), so the two limits bound what a pickle can
# make: 16 MB of "}" deflates to 16 KB and would otherwise make 16 million dicts (1 GB).
MAX_PICKLE_BYTES = 16 << 20
MAX_PICKLE_OPS = 4_000_000

# torch's legacy storage classes and dtype names, for the dtypes minitorch has.
_STORAGE_CLASSES = {"DoubleStorage": "float64", "FloatStorage": "float32",
                    "HalfStorage": "float16", "BFloat16Storage": "bfloat16",
                    "LongStorage": "int64", "IntStorage": "int32", "ShortStorage": "int16",
                    "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool"}
_DTYPE_ALIASES = {"double": "float64", "float": "float32", "half": "float16",
                  "long": "int64", "int": "int32", "short": "int16"}
# On torch's weights_only allowlist, but nothing minitorch can hold: named in the error.
_TORCH_ONLY = re.compile(
    r"torch\.(\w*Complex\w*Storage|complex\w*|cfloat|cdouble|chalf|quint\w*|qint\w*|"
    r"float8\w*|uint(16|32|64)|int[1-7]|uint[1-7]|Q\w*Storage|per_\w+|"
    r"_utils\._rebuild_(qtensor|sparse_tensor|nested_tensor|meta_tensor_no_storage|"
    r"wrapper_subclass|device_tensor_from_numpy|device_tensor_from_cpu_tensor|tensor_v3)|"
    r"serialization\._get_layout|\w+Tensor)$")


class _Refused(pickle.UnpicklingError):
    """Raised inside the unpickler; load() turns it into a one-line error naming the file."""


# ---------------------------------------------------------------------------
# Placeholders: what the unpickler builds instead of real objects
# ---------------------------------------------------------------------------
class _Ref:
    __slots__ = ()

    def __setstate__(self, state: Any) -> None:
        raise _Refused(f"a BUILD opcode tries to set the state of a {self._what()}")

    def _what(self) -> str:
        return type(self).__name__.strip("_").removesuffix("Ref").lower()


class _DtypeRef(_Ref):
    __slots__ = ("dtype",)

    def __init__(self, dt: dtype_cls) -> None:
        self.dtype = dt


class _StorageType(_Ref):
    """``torch.FloatStorage`` and friends: only a dtype."""

    __slots__ = ("dtype",)

    def __init__(self, dt: dtype_cls) -> None:
        self.dtype = dt


class _StorageRef(_Ref):
    __slots__ = ("dtype", "key", "location", "numel")

    def __init__(self, dt: dtype_cls, key: str, location: str, numel: int) -> None:
        self.dtype, self.key, self.location, self.numel = dt, key, location, numel


class _TensorRef(_Ref):
    __slots__ = ("storage", "offset", "size", "stride", "requires_grad", "parameter")

    def __init__(self, storage: _StorageRef, offset: int, size: tuple, stride: tuple,
                 requires_grad: bool, parameter: bool) -> None:
        self.storage, self.offset, self.size, self.stride = storage, offset, size, stride
        self.requires_grad, self.parameter = requires_grad, parameter


class _DeviceRef(_Ref):
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class _TensorType(_Ref):
    """``torch.Tensor`` as a type (an argument of ``_rebuild_from_type_v2``)."""


_TENSOR_TYPE = _TensorType()


# ---------------------------------------------------------------------------
# The allowed globals: each checks its arguments and returns a placeholder
# ---------------------------------------------------------------------------
def _no_state(value: Any, what: str) -> None:
    """Backward hooks, metadata, Python attributes: minitorch takes them only when empty."""
    if value is None or (isinstance(value, (dict, tuple, list)) and len(value) == 0):
        return
    if isinstance(value, tuple) and all(v is None or (isinstance(v, dict) and not v)
                                        for v in value):
        return
    raise _Refused(f"a tensor carries {what}, which minitorch does not load")


def _ints(value: Any, what: str) -> tuple:
    if not isinstance(value, (tuple, list)) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise _Refused(f"a tensor's {what} is not a tuple of integers")
    return tuple(value)


def _rebuild_tensor(storage: Any, storage_offset: Any, size: Any, stride: Any) -> _TensorRef:
    if not isinstance(storage, _StorageRef):
        raise _Refused("a tensor is rebuilt from something that is not a storage")
    if not isinstance(storage_offset, int) or isinstance(storage_offset, bool):
        raise _Refused("a tensor's storage offset is not an integer")
    return _TensorRef(storage, storage_offset, _ints(size, "size"), _ints(stride, "stride"),
                      False, False)


def _rebuild_tensor_v2(storage: Any, storage_offset: Any, size: Any, stride: Any,
                       requires_grad: Any, backward_hooks: Any, metadata: Any = None
                       ) -> _TensorRef:
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    if not isinstance(requires_grad, bool):
        raise _Refused("a tensor's requires_grad is not a bool")
    _no_state(backward_hooks, "backward hooks")
    _no_state(metadata, "metadata")
    t.requires_grad = requires_grad
    return t


def _rebuild_parameter(data: Any, requires_grad: Any, backward_hooks: Any) -> _TensorRef:
    if not isinstance(data, _TensorRef) or not isinstance(requires_grad, bool):
        raise _Refused("a Parameter is rebuilt from something that is not a tensor")
    _no_state(backward_hooks, "backward hooks")
    return _TensorRef(data.storage, data.offset, data.size, data.stride, requires_grad, True)


def _rebuild_parameter_with_state(data: Any, requires_grad: Any, backward_hooks: Any,
                                  state: Any) -> _TensorRef:
    _no_state(state, "Python attributes")
    return _rebuild_parameter(data, requires_grad, backward_hooks)


def _parameter(data: Any = None, requires_grad: Any = True) -> _TensorRef:
    return _rebuild_parameter(data, requires_grad, None)


_REBUILDERS = (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_parameter,
               _rebuild_parameter_with_state)


def _rebuild_from_type_v2(func: Any, new_type: Any, args: Any, state: Any) -> _TensorRef:
    if func not in _REBUILDERS or not isinstance(args, tuple):
        raise _Refused("_rebuild_from_type_v2 is given a function that does not build tensors")
    t = func(*args)
    _no_state(state, "Python attributes")
    if new_type is _TENSOR_TYPE:
        return t
    if new_type is _parameter:
        return _rebuild_parameter(t, t.requires_grad if t.parameter else True, None)
    raise _Refused("a tensor subclass other than Parameter")


class _SizeTuple(tuple):
    """``torch.Size(...)`` while unpickling; becomes a ``minitorch.Size``."""

    __slots__ = ()


def _size(dims: Any = ()) -> _SizeTuple:
    return _SizeTuple(_ints(dims, "size"))


def _device(kind: Any, index: Any = None) -> _DeviceRef:
    if not isinstance(kind, str) or not (index is None or (isinstance(index, int)
                                                            and not isinstance(index, bool))):
        raise _Refused("torch.device is given something other than a name and an index")
    return _DeviceRef(kind if index is None else f"{kind}:{index}")


def _encode(text: Any, encoding: Any = "latin1") -> bytes:
    """How protocol 2 pickles ``bytes``: ``_codecs.encode(str, "latin1")``."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise _Refused("_codecs.encode is used for something other than bytes")
    return text.encode("latin1")


def _bytearray(data: Any = b"") -> bytearray:
    # bytearray(10**12) would allocate a terabyte: only bytes are accepted.
    if not isinstance(data, (bytes, bytearray)):
        raise _Refused("bytearray is called with something other than bytes")
    return bytearray(data)


def _complex(real: Any = 0, imag: Any = 0) -> complex:
    if not all(isinstance(v, (int, float)) for v in (real, imag)):
        raise _Refused("complex is called with something other than numbers")
    return complex(real, imag)


def _ordered_dict(items: Any = ()) -> OrderedDict:
    if not isinstance(items, (list, tuple, dict)):
        raise _Refused("OrderedDict is called with something other than items")
    return OrderedDict(items)


def _allowed_globals() -> dict:
    table: dict = {
        "collections.OrderedDict": _ordered_dict,
        "collections.Counter": Counter,
        "builtins.set": set,
        "builtins.bytearray": _bytearray,
        "builtins.complex": _complex,
        "_codecs.encode": _encode,
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.nn.parameter.Parameter": _parameter,
        "torch.Tensor": _TENSOR_TYPE,
        "torch.Size": _size,
        "torch.device": _device,
        "torch.UntypedStorage": _StorageType(DTYPES["uint8"]),
        "torch.storage.UntypedStorage": _StorageType(DTYPES["uint8"]),
    }
    for cls, name in _STORAGE_CLASSES.items():
        table[f"torch.{cls}"] = _StorageType(DTYPES[name])
    for name, dt in DTYPES.items():
        table[f"torch.{name}"] = _DtypeRef(dt)
    for alias, name in _DTYPE_ALIASES.items():
        table[f"torch.{alias}"] = _DtypeRef(DTYPES[name])
    return table


_GLOBALS = _allowed_globals()


def _resolve_global(module: str, name: str) -> Any:
    """What ``GLOBAL module name`` may stand for: an entry of ``_GLOBALS``, or a refusal."""
    if module == "__builtin__":                   # Python 2 pickles
        module = "builtins"
    full = f"{module}.{name}"
    if full in _GLOBALS:
        return _GLOBALS[full]
    if _TORCH_ONLY.match(full):
        raise _Refused(f"it holds {full}, which PyTorch's weights_only loader allows but "
                       "minitorch has no equivalent of")
    hint = ""
    if module.startswith(("torch.nn", "torch.optim")):
        hint = " (a whole module or optimizer was saved: save its state_dict() instead)"
    raise _Refused(f"refused to load global {full!r}: only tensors, storages, dtypes, "
                   "OrderedDict and plain containers are allowed (PyTorch's weights_only "
                   f"rules); loading it could run code{hint}")


class RestrictedUnpickler(pickle.Unpickler):
    """A ``pickle.Unpickler`` that resolves only the globals in ``_GLOBALS``.

    ``find_class`` is the single door through which a pickle reaches Python
    objects by name; closing it to everything but a list of harmless
    functions is what makes ``weights_only`` loading safe.
    """

    def __init__(self, data: bytes) -> None:
        super().__init__(io.BytesIO(data))
        self.storages: dict = {}        # key -> _StorageRef (one per key: shared storages)

    def find_class(self, module: str, name: str) -> Any:
        return _resolve_global(module, name)

    def persistent_load(self, pid: Any) -> _StorageRef:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] in ("storage", b"storage")):
            raise _Refused(f"unknown persistent id {str(pid)[:60]}")
        _, stype, key, location, numel = pid
        key = key.decode("ascii", "replace") if isinstance(key, bytes) else key
        location = location.decode("ascii", "replace") if isinstance(location, bytes) \
            else location
        if not isinstance(stype, _StorageType) or not isinstance(key, str) or \
                not isinstance(location, str) or not isinstance(numel, int) or \
                isinstance(numel, bool) or numel < 0:
            raise _Refused(f"malformed storage reference {str(pid)[:80]}")
        if not re.fullmatch(r"[A-Za-z0-9_]{1,64}", key):
            raise _Refused(f"storage key {key[:40]!r} is not a plain name")
        ref = self.storages.get(key)
        if ref is None:
            ref = self.storages[key] = _StorageRef(stype.dtype, key, location, numel)
        elif ref.dtype is not stype.dtype or ref.numel != numel:
            raise _Refused(f"storage {key} is referred to with two dtypes or sizes")
        return ref


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------
_FORBIDDEN_OPS = {"INST", "OBJ", "NEWOBJ", "NEWOBJ_EX", "EXT1", "EXT2", "EXT4", "NEXT_BUFFER",
                  "READONLY_BUFFER", "BYTEARRAY8"}


def _scan(data: bytes) -> None:
    """Check the pickle's opcodes before running any: nothing that builds arbitrary objects,
    no memo index or frame larger than the pickle itself, at most ``MAX_PICKLE_OPS``
    opcodes, protocol 0..5, a STOP at the end."""
    ops = 0
    last = None
    try:
        for op, arg, pos in pickletools.genops(data):
            ops += 1
            last = op.name
            if ops > MAX_PICKLE_OPS:
                raise _Refused(f"the pickle has more than {MAX_PICKLE_OPS} opcodes")
            if op.name == "GLOBAL" and isinstance(arg, str) and " " in arg:
                _resolve_global(*arg.split(" ", 1))   # the first global refused is named
            if op.name in _FORBIDDEN_OPS:
                raise _Refused(f"opcode {op.name} (which builds arbitrary objects) at byte {pos}")
            if op.name == "PROTO" and not 0 <= arg <= 5:
                raise _Refused(f"unknown pickle protocol {arg}")
            if op.name in ("PUT", "BINPUT", "LONG_BINPUT", "GET", "BINGET", "LONG_BINGET") \
                    and (not isinstance(arg, int) or not 0 <= arg <= len(data)):
                raise _Refused(f"memo index {arg} at byte {pos} is out of range")
            if op.name == "FRAME" and arg > len(data):
                raise _Refused(f"a frame of {arg} bytes in a {len(data)}-byte pickle")
    except _Refused:
        raise
    except Exception as e:               # noqa: BLE001  (pickletools raises many types)
        raise _Refused(f"malformed pickle ({str(e)[:100]})") from None
    if last != "STOP":
        raise _Refused("the pickle does not end with STOP")


def is_torch_archive(archive: SafeZip) -> bool:
    """Whether a zip archive looks like ``torch.save``'s (a ``<folder>/data.pkl`` entry)."""
    return any(n.endswith("/data.pkl") and n.count("/") == 1 for n in archive.names())


def load(archive: SafeZip, map_location: Any) -> Any:
    """Read the object in an opened ``torch.save`` archive (see :func:`minitorch.load`)."""
    src = archive.source
    pickles = [n for n in archive.names() if n.endswith("/data.pkl") and n.count("/") == 1]
    if len(pickles) != 1:
        raise fail(src, f"a PyTorch archive holds {len(pickles)} data.pkl entries, not one")
    prefix = pickles[0][:-len("data.pkl")]
    if any(n.startswith(prefix + "code/") or n == prefix + "constants.pkl"
           for n in archive.names()):
        raise fail(src, "a TorchScript archive (torch.jit.save); minitorch loads torch.save "
                        "files: save the model's state_dict() with torch.save")
    order = "<"
    if prefix + "byteorder" in archive.entries:
        mark = archive.read(prefix + "byteorder", limit=16, what="the byteorder entry")
        if mark not in (b"little", b"big"):
            raise fail(src, f"unknown byte order {mark[:16]!r}")
        order = "<" if mark == b"little" else ">"
    data = archive.read(pickles[0], limit=MAX_PICKLE_BYTES, what="data.pkl")
    unpickler = RestrictedUnpickler(data)
    try:
        _scan(data)
        tree = unpickler.load()
    except _Refused as e:
        raise fail(src, str(e)) from None
    except RecursionError:
        raise fail(src, "the pickle nests too deeply") from None
    except Exception as e:                 # noqa: BLE001  (a malformed pickle raises anything)
        raise fail(src, f"malformed pickle in data.pkl ({type(e).__name__}: "
                        f"{str(e).splitlines()[0][:100] if str(e) else ''})") from None
    return _Materializer(archive, prefix, order, map_location).convert(tree, 0)


class _Materializer:
    """Turns the unpickler's placeholders into minitorch objects (and plain data into copies)."""

    def __init__(self, archive: SafeZip, prefix: str, order: str, map_location: Any) -> None:
        self.archive, self.prefix, self.order = archive, prefix, order
        self.map_location = map_location
        self.source = archive.source
        self.storages: dict = {}          # id(_StorageRef) -> UntypedStorage
        self.done: dict = {}              # id(object) -> its conversion (shared refs, cycles)

    def storage(self, ref: _StorageRef) -> UntypedStorage:
        st = self.storages.get(id(ref))
        if st is None:
            dt = ref.dtype
            width = 2 if dt.name == "bfloat16" else dt.itemsize
            raw = self.archive.read(f"{self.prefix}data/{ref.key}", expected=ref.numel * width,
                                    what=f"storage {ref.key} ({ref.numel} {dt.name} elements)")
            st = make_storage(from_bytes(raw, dt, self.order),
                              target_device(ref.location, self.map_location, self.source))
            self.storages[id(ref)] = st
        return st

    def convert(self, obj: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise fail(self.source, "object nesting is too deep")
        if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)):
            return obj
        key = id(obj)
        if key in self.done:
            return self.done[key]
        if isinstance(obj, _TensorRef):
            ref = obj.storage
            out = make_tensor(self.source, self.storage(ref), ref.dtype, obj.size, obj.stride,
                              obj.offset, obj.requires_grad, obj.parameter)
        elif isinstance(obj, _DtypeRef):
            out = obj.dtype
        elif isinstance(obj, _DeviceRef):
            try:
                out = as_device(obj.text)
            except (TypeError, ValueError, RuntimeError):
                raise fail(self.source, f"unknown device {obj.text[:40]!r}") from None
        elif isinstance(obj, list):
            out = self.done[key] = []
            out.extend(self.convert(v, depth + 1) for v in obj)
        elif isinstance(obj, (dict, Counter)):
            out = self.done[key] = type(obj)() if type(obj) in (dict, OrderedDict, Counter) \
                else {}
            for k, v in list(obj.items()):
                out[self._key(self.convert(k, depth + 1))] = self.convert(v, depth + 1)
        elif isinstance(obj, _SizeTuple):
            out = Size(obj)
        elif isinstance(obj, tuple):
            out = tuple(self.convert(v, depth + 1) for v in obj)
        elif isinstance(obj, (set, frozenset)):
            out = type(obj)(self._key(self.convert(v, depth + 1)) for v in obj)
        elif isinstance(obj, bytearray):
            out = bytearray(obj)
        elif isinstance(obj, _StorageRef):
            raise fail(self.source, "holds a bare storage; minitorch loads tensors (save "
                                    "tensors, not their storages)")
        else:
            raise fail(self.source, f"holds an object of type {type(obj).__name__}, which "
                                    "is not data")
        self.done[key] = out
        return out

    def _key(self, k: Any) -> Any:
        try:
            hash(k)
        except TypeError:
            raise fail(self.source, f"an unhashable {type(k).__name__} is used as a key") \
                from None
        return k


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------
class _PickleWriter:
    """Emits protocol-2 pickle opcodes for data and tensors, as ``torch.save`` would.

    Only what minitorch saves is supported: None, bools, ints, floats,
    strings, tuples, lists, dicts, OrderedDicts, dtypes, devices and tensors.
    Lists, dicts and tensors are memoized (``BINPUT``/``BINGET``), so an
    object saved twice loads as one object.
    """

    def __init__(self) -> None:
        self.out = bytearray()
        self.memo: dict = {}         # id(obj) -> (index, obj): obj kept alive while writing
        self.storages: dict = {}     # id(UntypedStorage) -> (key, storage, dtype)

    def dump(self, obj: Any) -> bytes:
        self.out += b"\x80\x02"                      # PROTO 2
        self.save(obj, 0)
        self.out += b"."                             # STOP
        return bytes(self.out)

    def _global(self, module: str, name: str) -> None:
        self.out += b"c" + f"{module}\n{name}\n".encode("ascii")      # GLOBAL

    def _put(self, obj: Any) -> None:
        index = len(self.memo)
        self.memo[id(obj)] = (index, obj)
        self.out += (b"q" + bytes([index])) if index < 256 else (b"r" + struct.pack("<I", index))

    def _get(self, index: int) -> None:
        self.out += (b"h" + bytes([index])) if index < 256 else (b"j" + struct.pack("<I", index))

    def save(self, obj: Any, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise ValueError("minitorch.save: object nesting is too deep")
        out = self.out
        if id(obj) in self.memo and self.memo[id(obj)][1] is obj:
            self._get(self.memo[id(obj)][0])
        elif obj is None:
            out += b"N"
        elif obj is True or obj is False or isinstance(obj, np.bool_):
            out += b"\x88" if obj else b"\x89"
        elif isinstance(obj, (int, np.integer)):
            self._int(int(obj))
        elif isinstance(obj, (float, np.floating)):
            out += b"G" + struct.pack(">d", float(obj))
        elif isinstance(obj, str):
            data = obj.encode("utf-8", "surrogatepass")
            out += b"X" + struct.pack("<I", len(data)) + data
        elif isinstance(obj, Tensor):
            self._tensor(obj, depth)
        elif isinstance(obj, dtype_cls):
            self._global("torch", obj.name)
        elif isinstance(obj, Size):
            self._global("torch", "Size")
            self.save(tuple(int(d) for d in obj), depth + 1)
            out += b"\x85R"                          # torch.Size((d0, d1, ...))
        elif isinstance(obj, tuple):
            if not obj:
                out += b")"
            elif len(obj) <= 3:
                for v in obj:
                    self.save(v, depth + 1)
                out += b"\x85\x86\x87"[len(obj) - 1:len(obj)]
            else:
                out += b"("
                for v in obj:
                    self.save(v, depth + 1)
                out += b"t"
        elif isinstance(obj, list):
            out += b"]"
            self._put(obj)
            if obj:
                out += b"("
                for v in obj:
                    self.save(v, depth + 1)
                out += b"e"                          # APPENDS
        elif isinstance(obj, dict):
            if isinstance(obj, OrderedDict):
                self._global("collections", "OrderedDict")
                out += b")R"                         # OrderedDict()
            else:
                out += b"}"
            self._put(obj)
            if obj:
                out += b"("
                for k, v in obj.items():
                    self.save(k, depth + 1)
                    self.save(v, depth + 1)
                out += b"u"                          # SETITEMS
        elif obj.__class__.__name__ == "device" and hasattr(obj, "type"):
            self._global("torch", "device")
            self.save((str(obj),), depth + 1)
            out += b"R"
        else:
            raise TypeError(f"minitorch.save cannot store objects of type {type(obj).__name__}"
                            ": save tensors, numbers, strings, and dicts/lists/tuples of them "
                            "(for modules and optimizers, save their state_dict())")

    def _int(self, v: int) -> None:
        if 0 <= v < 256:
            self.out += b"K" + bytes([v])
        elif -2 ** 31 <= v < 2 ** 31:
            self.out += b"J" + struct.pack("<i", v)
        else:
            data = pickle.encode_long(v)
            self.out += b"\x8a" + bytes([len(data)]) + data            # LONG1

    def _tensor(self, t: Tensor, depth: int) -> None:
        param = bool(getattr(t, "_is_param", False))
        if param:
            self._global("torch._utils", "_rebuild_parameter")
        self._global("torch._utils", "_rebuild_tensor_v2")
        self.out += b"("
        self._storage(t)
        self._int(t._offset)
        self.save(tuple(t._shape), depth + 1)
        self.save(tuple(t._stride), depth + 1)
        self.save(bool(t._requires_grad) and not param, depth + 1)
        self.save(OrderedDict(), depth + 1)          # backward hooks: none
        self.out += b"tR"
        if param:
            self.save(bool(t._requires_grad), depth + 1)
            self.save(OrderedDict(), depth + 1)
            self.out += b"\x87R"                     # _rebuild_parameter(data, rg, hooks)
        self._put(t)

    def _storage(self, t: Tensor) -> None:
        st = t._storage
        entry = self.storages.get(id(st))
        if entry is None:
            entry = self.storages[id(st)] = (str(len(self.storages)), st, t.dtype)
        elif entry[2] is not t.dtype:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same "
                               "data as different types")
        key, _, dt = entry
        cls = next(c for c, n in _STORAGE_CLASSES.items() if n == dt.name)
        self.out += b"("
        self.save("storage", 0)
        self._global("torch", cls)
        self.save(key, 0)
        self.save("cpu" if st.device.type == "cpu" else str(st.device), 0)
        self._int(st._data.shape[0])
        self.out += b"tQ"                            # TUPLE, BINPERSID


def save(obj: Any, f: Any) -> None:
    """Write ``obj`` as ``torch.save`` does, for ``torch.load(f, weights_only=True)`` to read."""
    writer = _PickleWriter()
    pickled = writer.dump(obj)
    blobs = []
    for key, st, dt in writer.storages.values():
        data = st._data if isinstance(st._data, np.ndarray) else st._data.copy_to_host()
        blobs.append((key, to_bytes(data, dt)))

    def write(stream: Any) -> None:
        with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED) as z:
            z.writestr("archive/data.pkl", pickled)
            z.writestr("archive/.format_version", "1")
            z.writestr("archive/.storage_alignment", "64")
            z.writestr("archive/byteorder", "little")
            for key, b in blobs:
                z.writestr(f"archive/data/{key}", b)
            z.writestr("archive/version", "3\n")
            z.writestr("archive/.data/serialization_id", "0" * 40)

    write_atomically(f, write)
