"""Untrusted files: every reader gives a correct result or one documented one-line error.

``minitorch.load`` (minitorch zip, PyTorch zip, safetensors) raises
``SerializationError`` (a ``RuntimeError``); the command line's image readers
(PNG, ``.npy``, IDX, ``.gz``) raise ``UserError``.  Hand-made hostile files
(pickles that call ``os.system``, zip bombs, ``../`` entry names, headers
claiming terabytes, tensors reaching outside their storage) and Hypothesis
over truncated and bit-flipped files check that nothing else ever escapes,
that no code runs, and (with tracemalloc) that no reader allocates much more
than the file holds.
"""

import gzip
import io
import json
import os
import pickle
import struct
import tracemalloc
import zipfile
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import minitorch as torch
from minitorch.demos.checks import UserError
from minitorch.demos.predict import load_inputs
from minitorch.serialization import SerializationError
from minitorch.serialization import safetensors as st

pytestmark = pytest.mark.data

MAX_PEAK = 32 << 20          # bytes a reader may allocate for a file of a few KB


def load_bytes(data: bytes):
    return torch.load(io.BytesIO(data))


def refused(data: bytes, match: str) -> str:
    """Load ``data``; it must fail with one SerializationError line matching ``match``."""
    with pytest.raises(SerializationError, match=match) as info:
        load_bytes(data)
    assert "\n" not in str(info.value)
    return str(info.value)


# ---------------------------------------------------------------------------
# Builders of valid and hostile files
# ---------------------------------------------------------------------------
def minitorch_file(obj=None) -> bytes:
    buf = io.BytesIO()
    torch.save({"w": torch.arange(6).float().reshape(2, 3), "n": [1, "a"]} if obj is None
               else obj, buf, format="minitorch")
    return buf.getvalue()


def torch_file(obj=None) -> bytes:
    buf = io.BytesIO()
    torch.save({"w": torch.arange(6).float().reshape(2, 3), "n": [1, "a"]} if obj is None
               else obj, buf, format="torch")
    return buf.getvalue()


def safetensors_file() -> bytes:
    return st.save({"w": torch.arange(6).float().reshape(2, 3), "b": torch.ones(2)})


def rezip(data: bytes, change=None, extra=(), method=zipfile.ZIP_STORED) -> bytes:
    """``data``'s zip entries, rewritten: ``change(name, bytes)`` -> bytes, plus ``extra``."""
    z = zipfile.ZipFile(io.BytesIO(data))
    files = {n: z.read(n) for n in z.namelist()}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=method) as zw:
        for n, b in files.items():
            zw.writestr(n, change(n, b) if change else b)
        for n, b in extra:
            zw.writestr(n, b)
    return out.getvalue()


def torch_zip(pkl: bytes, records=()) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/byteorder", "little")
        for n, b in records:
            z.writestr(f"archive/{n}", b)
        z.writestr("archive/version", "3\n")
    return out.getvalue()


def G(module: str, name: str) -> bytes:         # GLOBAL
    return b"c" + f"{module}\n{name}\n".encode()


def S(text: str) -> bytes:                      # BINUNICODE
    data = text.encode()
    return b"X" + struct.pack("<I", len(data)) + data


def I(n: int) -> bytes:                         # BININT, or LONG1 beyond 32 bits
    if -2 ** 31 <= n < 2 ** 31:
        return b"J" + struct.pack("<i", n)
    data = pickle.encode_long(n)
    return b"\x8a" + bytes([len(data)]) + data


def storage_pid(key="0", numel=6, cls="FloatStorage") -> bytes:
    return b"(" + S("storage") + G("torch", cls) + S(key) + S("cpu") + I(numel) + b"tQ"


def tensor_op(pid: bytes, offset=0, size=(2, 3), stride=(3, 1)) -> bytes:
    sizes = b"(" + b"".join(I(s) for s in size) + b"t"
    strides = b"(" + b"".join(I(s) for s in stride) + b"t"
    return (G("torch._utils", "_rebuild_tensor_v2") + b"(" + pid + I(offset) + sizes + strides +
            b"\x89" + G("collections", "OrderedDict") + b")R" + b"tR")


def pickle_of(body: bytes) -> bytes:
    return b"\x80\x02" + body + b"."


FLOATS6 = np.arange(6, dtype="<f4").tobytes()


# ---------------------------------------------------------------------------
# PyTorch zips: the restricted unpickler
# ---------------------------------------------------------------------------
def test_handmade_torch_pickle_is_read():
    data = torch_zip(pickle_of(tensor_op(storage_pid())), [("data/0", FLOATS6)])
    assert load_bytes(data).tolist() == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize("module,name", [("os", "system"), ("builtins", "eval"),
                                         ("posix", "system"), ("subprocess", "Popen"),
                                         ("torch", "load"), ("builtins", "getattr"),
                                         ("__builtin__", "exec")])
def test_globals_outside_the_allowlist_are_refused_before_anything_runs(tmp_path, module,
                                                                          name):
    marker = tmp_path / "ran"
    body = G(module, name) + b"(" + S(f"touch {marker}") + b"tR"
    message = refused(torch_zip(pickle_of(body)), "refused to load global")
    assert f"{'builtins' if module == '__builtin__' else module}.{name}" in message
    assert "<BytesIO>" in message                 # names the file
    assert not marker.exists()


def test_file_name_is_in_the_message(tmp_path):
    path = tmp_path / "evil.pt"
    path.write_bytes(torch_zip(pickle_of(G("os", "system") + b"(" + S("true") + b"tR")))
    with pytest.raises(SerializationError, match=f"{path}: refused to load global 'os.system'"):
        torch.load(path)


def test_allowlisted_but_unsupported_globals_say_so():
    refused(torch_zip(pickle_of(G("torch._utils", "_rebuild_qtensor") + b")R")),
            "minitorch has no equivalent")
    refused(torch_zip(pickle_of(storage_pid(cls="ComplexFloatStorage"))),
            "ComplexFloatStorage")


@pytest.mark.parametrize("body,match", [
    (G("torch._utils", "_rebuild_tensor_v2") + b"(" + I(1) + b"tR", "malformed pickle"),
    (G("torch._utils", "_rebuild_tensor_v2") + b"(" + I(1) + I(0) + b")" + b")" + b"\x89N" +
     b"tR", "not a storage"),
    (G("torch", "Size") + S("abc") + b"\x85R", "not a tuple of integers"),
    (G("collections", "OrderedDict") + b"(" + I(5) + b"tR", "OrderedDict"),
    (G("builtins", "bytearray") + b"(" + b"\x8a\x05\x00\x00\x00\x00\x01" + b"tR", "bytearray"),
    (G("_codecs", "encode") + b"(" + I(1) + S("latin1") + b"tR", "_codecs"),
    (G("torch", "device") + b"(" + I(3) + b"tR", "torch.device"),
    (G("torch._tensor", "_rebuild_from_type_v2") + b"(" + G("builtins", "print") + b")" +
     b")" + b"}tR", "refused to load global 'builtins.print'"),
    (storage_pid(key="../../x"), "not a plain name"),
    (b"(" + S("module") + I(1) + b"tQ", "unknown persistent id"),
    (b"i" + b"os\nsystem\n" + b"(" + b"S'true'\n", "malformed pickle|opcode"),
    (b"(" + S("x") + b"o", "opcode OBJ"),
    (b"]r" + struct.pack("<I", 10 ** 9), "memo index"),
    (b"]" + b"\x82\x01", "opcode EXT1"),
    (tensor_op(storage_pid()) + b"}" + S("_shape") + I(10 ** 6) + b"sb", "BUILD"),
    (b"\x80\x09N", "protocol"),
])
def test_malformed_and_hostile_pickles(body, match):
    refused(torch_zip(pickle_of(body), [("data/0", FLOATS6)]), match)


def test_deep_nesting_and_truncation():
    refused(torch_zip(pickle_of(b"]" + b"(]" * 300 + b"e" * 300)), "nesting is too deep")
    refused(torch_zip(pickle_of(b"(" * 100000 + b"t" * 100000)), "nest|malformed")
    good = pickle_of(tensor_op(storage_pid()))
    refused(torch_zip(good[:-5], [("data/0", FLOATS6)]), "malformed pickle|STOP")


@pytest.mark.parametrize("numel,size,stride,offset,match", [
    (10 ** 12, (2, 3), (3, 1), 0, "holds 24 bytes, but its shape and dtype need"),
    (6, (2, 3), (3, 1), 1, "does not fit"),
    (6, (2, 4), (3, 1), 0, "does not fit"),
    (6, (3, 3), (3, 1), 0, "does not fit"),
    (6, (2,), (10 ** 9,), 0, "does not fit"),
    (6, (2, 3), (-3, 1), 0, "stride is -3"),
    (6, (-2, 3), (3, 1), 0, "size is -2"),
    (6, (2, 3), (3, 1), -1, "offset is -1"),
    (6, (2, 3), (3,), 0, "differ in length"),
])
def test_tensor_geometry_is_checked_against_the_storage(numel, size, stride, offset, match):
    body = tensor_op(storage_pid(numel=numel), offset, size, stride)
    refused(torch_zip(pickle_of(body), [("data/0", FLOATS6)]), match)


def test_storage_reused_with_another_dtype_is_refused():
    body = b"(" + tensor_op(storage_pid()) + tensor_op(storage_pid(cls="IntStorage")) + b"t"
    refused(torch_zip(pickle_of(body), [("data/0", FLOATS6)]), "two dtypes")


def test_missing_storage_record_and_torchscript():
    refused(torch_zip(pickle_of(tensor_op(storage_pid()))), "missing from the archive")
    refused(torch_zip(pickle_of(b"N"), [("code/x.py", b"")]), "TorchScript")


# ---------------------------------------------------------------------------
# Zip archives (both zip formats)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("make", [minitorch_file, torch_file])
def test_entry_outside_the_archive_is_refused(make):
    for name in ("../../x", "/etc/x", "a/../../x", "C:/x", "a\\..\\x"):
        refused(rezip(make(), extra=[(name, b"x")]), "outside the archive")


@pytest.mark.parametrize("make", [minitorch_file, torch_file])
def test_only_stored_and_deflate_entries(make):
    assert load_bytes(rezip(make(), method=zipfile.ZIP_DEFLATED))["w"].shape == (2, 3)
    refused(rezip(make(), method=zipfile.ZIP_LZMA), "compression method 14")
    refused(rezip(make(), method=zipfile.ZIP_BZIP2), "compression method 12")


def patch_declared_size(data: bytes, name: str, size: int) -> bytes:
    """Rewrite the uncompressed size of entry ``name`` in the local header and the directory."""
    raw = bytearray(data)
    encoded = name.encode()
    for sig, size_at, name_at in ((b"PK\x03\x04", 22, 30), (b"PK\x01\x02", 24, 46)):
        pos = 0
        while (pos := raw.find(sig, pos)) >= 0:
            if raw[pos + name_at:pos + name_at + len(encoded)] == encoded:
                raw[pos + size_at:pos + size_at + 4] = struct.pack("<I", size)
            pos += 4
    return bytes(raw)


def test_zip_bomb_declared_sizes_are_refused_before_reading():
    tracemalloc.start()
    try:
        big = torch.zeros(1000)
        for make, entry in ((minitorch_file, "storages/0.bin"), (torch_file, "archive/data/0")):
            data = rezip(make({"w": big}), method=zipfile.ZIP_DEFLATED)
            bomb = patch_declared_size(data, entry, 3_000_000_000)
            refused(bomb, "zip bomb|but its shape and dtype need")
            stored = patch_declared_size(make({"w": big}), entry, 3_000_000_000)
            refused(stored, "declares 3000000000 bytes in|but its shape and dtype need")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MAX_PEAK


def test_real_deflate_bomb_expands_at_most_to_its_declared_size():
    # 8 MB of zeros in an 8 KB entry, declared honestly as a manifest: refused by its limit;
    # declared as 4 KB: reading stops there and the CRC check fails.
    def change(name, b):
        return b"0" * 8_000_000 if name == "minitorch.json" else b
    data = rezip(minitorch_file(), change, method=zipfile.ZIP_DEFLATED)
    refused(data, "not valid JSON")
    lying = patch_declared_size(data, "minitorch.json", 4096)
    tracemalloc.start()
    try:
        refused(lying, "truncated or corrupted|different number of bytes")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MAX_PEAK


# ---------------------------------------------------------------------------
# minitorch zips: the manifest and the tree
# ---------------------------------------------------------------------------
def with_json(name: str, value) -> bytes:
    text = value if isinstance(value, (bytes, str)) else json.dumps(value)
    return rezip(minitorch_file(), lambda n, b: (text.encode() if isinstance(text, str)
                                                 else text) if n == name else b)


@pytest.mark.parametrize("name,value,match", [
    ("minitorch.json", b"{not json", "not valid JSON"),
    ("minitorch.json", b"\xff\xfe", "not valid JSON"),
    ("minitorch.json", [], "bad magic"),
    ("minitorch.json", {"format": "minitorch", "version": "1"}, "version"),
    ("minitorch.json", {"format": "minitorch", "version": True}, "version"),
    ("minitorch.json", {"format": "minitorch", "version": 99}, "version"),
    ("minitorch.json", {"format": "minitorch", "version": 1, "storages": 3}, "storage list"),
    ("minitorch.json", {"format": "minitorch", "version": 1,
                        "storages": [{"index": "0", "dtype": "float32", "nbytes": 24}]},
     "storage index"),
    ("minitorch.json", {"format": "minitorch", "version": 1,
                        "storages": [{"index": 0, "dtype": "float32", "nbytes": -24}]},
     "byte count"),
    ("minitorch.json", {"format": "minitorch", "version": 1,
                        "storages": [{"index": 0, "dtype": "float32", "nbytes": 10}]},
     "whole number"),
    ("minitorch.json", {"format": "minitorch", "version": 1,
                        "storages": [{"index": 0, "dtype": "complex64", "nbytes": 24}]},
     "invalid storage entry"),
    ("minitorch.json", {"format": "minitorch", "version": 1,
                        "storages": [{"index": 0, "dtype": "float32", "nbytes": 24}] * 2},
     "twice"),
    ("minitorch.json", {"format": "minitorch", "version": 1,
                        "storages": [{"index": 0, "dtype": "float32", "nbytes": 10 ** 12}]},
     "but its shape and dtype need"),
    ("data.json", "[" * 100000 + "]" * 100000, "not valid JSON|too deep"),
    ("data.json", {"__tensor__": {"storage": 0, "dtype": "float32", "shape": [2, 3],
                                  "stride": [3, 1], "offset": 1}}, "does not fit"),
    ("data.json", {"__tensor__": {"storage": 5, "dtype": "float32", "shape": [1],
                                  "stride": [1], "offset": 0}}, "does not list"),
    ("data.json", {"__tensor__": {"storage": 0, "dtype": "int32", "shape": [1],
                                  "stride": [1], "offset": 0}}, "refers to a storage of dtype"),
    ("data.json", {"__tensor__": {"storage": 0, "dtype": "float32", "shape": "12",
                                  "stride": [1], "offset": 0}}, "not sequences"),
    ("data.json", {"__tensor__": {"storage": 0, "dtype": "float32", "shape": [1],
                                  "stride": [1], "offset": 0, "device": 5}}, "device"),
    ("data.json", {"__tensor__": {"storage": 0, "dtype": "float32", "shape": [1],
                                  "stride": [1], "offset": 0, "device": "tpu"}}, "device"),
    ("data.json", {"__dict__": [[[1], 2]]}, "unhashable"),
    ("data.json", {"__dict__": [[1]]}, "malformed dict"),
    ("data.json", {"__tuple__": 3}, "malformed object tree"),
    ("data.json", {"__float__": "1e999"}, "bad float"),
    ("data.json", {"__dtype__": "complex64"}, "unknown dtype"),
    ("data.json", {"__code__": "os.system"}, "unknown object tag"),
    ("data.json", {}, "unexpected value"),
])
def test_malformed_minitorch_files(name, value, match):
    refused(with_json(name, value), match)


def test_not_a_file_of_any_format():
    refused(b"", "empty")
    refused(b"hello world, not a checkpoint", "not a minitorch, PyTorch or safetensors")
    refused(rezip(minitorch_file(), lambda n, b: b, extra=[]).replace(b"minitorch.json",
                                                                       b"other_name.jsn"),
            "neither a minitorch nor a PyTorch file|missing")
    refused(minitorch_file()[:200], "not a readable zip|truncated")


# ---------------------------------------------------------------------------
# safetensors
# ---------------------------------------------------------------------------
def safetensors_with_header(header: dict, data: bytes = b"") -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


@pytest.mark.parametrize("header,data,match", [
    ({"w": {"dtype": "F32", "shape": [250000000000], "data_offsets": [0, 10 ** 12]}},
     b"\0" * 16, "not a valid safetensors file"),
    ({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8,
     "not a valid safetensors file"),
    ({"w": {"dtype": "C64", "shape": [1], "data_offsets": [0, 8]}}, b"\0" * 8,
     "dtype C64"),
    ({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
      "__metadata__": {"minitorch.tree": "[[[["}}, b"\0" * 4, "not valid JSON"),
    ({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
      "__metadata__": {"minitorch.tree": json.dumps({"__tensor__": {"name": "x"}})}},
     b"\0" * 4, "does not hold"),
    ({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
      "__metadata__": {"minitorch.tree": "[" * 5000 + "]" * 5000}}, b"\0" * 4,
     "too deep|not valid JSON"),
])
def test_hostile_safetensors(header, data, match):
    tracemalloc.start()
    try:
        refused(safetensors_with_header(header, data), match)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MAX_PEAK


def test_safetensors_header_length_beyond_the_file():
    refused(struct.pack("<Q", 2 ** 40) + b"{}", "not a valid safetensors file")
    refused(struct.pack("<Q", 10) + b'{"a": 1}', "not a valid safetensors file")
    with pytest.raises(SerializationError, match="<bytes>"):
        st.load(b"\0" * 7)


# ---------------------------------------------------------------------------
# The command line's image readers: PNG, .npy, IDX, .gz
# ---------------------------------------------------------------------------
def png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_file(width=4, height=4, pixels=None, ihdr=None) -> bytes:
    rows = pixels if pixels is not None else b"".join(b"\x00" + bytes(range(width))
                                                      for _ in range(height))
    header = ihdr if ihdr is not None else struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header) +
            png_chunk(b"IDAT", zlib.compress(rows)) + png_chunk(b"IEND", b""))


def npy_file(array=None) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.arange(784, dtype=np.uint8).reshape(28, 28) if array is None else array)
    return buf.getvalue()


def idx_file(n=2, gz=False) -> bytes:
    raw = struct.pack(">BBBBIII", 0, 0, 8, 3, n, 28, 28) + bytes(range(256)) * (n * 784 // 256) \
        + bytes(n * 784 % 256)
    return gzip.compress(raw, mtime=0) if gz else raw


def read_image(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return load_inputs([str(path)], "image")


def image_refused(tmp_path, name, data, match):
    with pytest.raises(UserError, match=match) as info:
        read_image(tmp_path, name, data)
    assert "\n" not in str(info.value) and name in str(info.value)


def test_valid_images_are_read(tmp_path):
    assert read_image(tmp_path, "a.png", png_file())[0].array.shape == (1, 28, 28)
    assert read_image(tmp_path, "a.npy", npy_file())[0].array.shape == (1, 28, 28)
    assert len(read_image(tmp_path, "a-idx3-ubyte", idx_file())) == 2
    assert len(read_image(tmp_path, "a-idx3-ubyte.gz", idx_file(gz=True))) == 2


#: Damaged and hostile images for the CLI readers: (file name, bytes, the error expected).
HOSTILE_IMAGES = [
    ("bad.png", png_file(ihdr=b"\x00\x00\x00\x01\x00"), "IHDR of 5 bytes"),
    ("zero.png", png_file(0, 0, pixels=b""), "no pixels"),
    ("huge.png", png_file(ihdr=struct.pack(">IIBBBBB", 65535, 65535, 8, 0, 0, 0, 0)),
     "more than the"),
    ("short.png", png_file(ihdr=struct.pack(">IIBBBBB", 100, 100, 8, 0, 0, 0, 0)),
     "truncated PNG image data"),
    ("filter.png", png_file(2, 2, pixels=b"\x07\x00\x00\x07\x00\x00"), "filter type 7"),
    ("nopng.png", b"GIF89a", "not a PNG"),
    ("trunc.png", png_file()[:20], "truncated PNG chunk|without header"),
    ("plte.png", png_file()[:33] + png_chunk(b"PLTE", b"\x00\x01") + png_file()[33:],
     "palette"),
    ("big.npy", npy_file()[:10] + npy_file()[10:].replace(b"(28, 28)", b"(10**12,)"),
     "not a readable .npy"),
    ("big2.npy", npy_file()[:10] + npy_file()[10:].replace(b"(28, 28)", b"(99999999999,)"),
     "the header says"),
    ("obj.npy", npy_file(np.array(["a"] * 784).reshape(28, 28)), "not of numbers"),
    ("trunc.npy", npy_file()[:-10], "the header says"),
    ("junk.npy", b"\x93NUMPY\x01\x00\x10\x00{'descr': 1}   \n", "not a readable .npy"),
    ("trunc-idx3-ubyte.gz", idx_file(gz=True)[:40], "truncated or corrupted"),
    ("flip-idx3-ubyte.gz", idx_file(gz=True)[:-8] + b"\0" * 8, "truncated or corrupted"),
    ("lie-idx3-ubyte", idx_file()[:4] + struct.pack(">III", 60000, 28, 28) + idx_file()[16:],
     "more than the file can hold"),
    ("lie-idx3-ubyte.gz", gzip.compress(idx_file()[:4] + struct.pack(">III", 4 * 10 ** 9, 28, 28)
                                        + bytes(100), mtime=0), "more than the file can hold"),
    ("short-idx3-ubyte", idx_file()[:-1], "more than the file can hold"),
    ("long-idx3-ubyte", idx_file() + b"x", "does not match"),
    ("magic-idx3-ubyte", b"\x01\x02\x03\x04" + idx_file()[4:], "bad magic"),
]


# Ids are the file names: the bytes themselves would make unreadable (and, for
# gzip, time-dependent) test ids.
@pytest.mark.parametrize("name,data,match", HOSTILE_IMAGES, ids=[row[0] for row in HOSTILE_IMAGES])
def test_hostile_images(tmp_path, name, data, match):
    tracemalloc.start()
    try:
        image_refused(tmp_path, name, data, match)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MAX_PEAK


# ---------------------------------------------------------------------------
# Fuzzing: truncated, bit-flipped and overwritten files of every format
# ---------------------------------------------------------------------------
VALID = {
    "minitorch": minitorch_file(), "torch": torch_file(), "safetensors": safetensors_file(),
    "png": png_file(), "npy": npy_file(), "idx": idx_file(), "idx.gz": idx_file(gz=True),
}
NAMES = {"png": "x.png", "npy": "x.npy", "idx": "x-idx3-ubyte", "idx.gz": "x-idx3-ubyte.gz"}


@hs.composite
def damaged(draw, fmt):
    data = bytearray(VALID[fmt])
    kind = draw(hs.sampled_from(["truncate", "flip", "overwrite"]))
    if kind == "truncate":
        return bytes(data[:draw(hs.integers(0, len(data) - 1))])
    if kind == "flip":
        for _ in range(draw(hs.integers(1, 4))):
            pos = draw(hs.integers(0, len(data) - 1))
            data[pos] ^= 1 << draw(hs.integers(0, 7))
        return bytes(data)
    pos = draw(hs.integers(0, len(data) - 1))
    junk = draw(hs.binary(min_size=1, max_size=8))
    data[pos:pos + len(junk)] = junk
    return bytes(data)


def touch(obj):
    """Read every element of every tensor in ``obj`` (a bad header would fault or raise here)."""
    if isinstance(obj, torch.Tensor):
        obj.tolist()
    elif isinstance(obj, dict):
        for k, v in obj.items():
            touch(k)
            touch(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            touch(v)


FUZZ = settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                        HealthCheck.too_slow])


def check_one(fmt, data, tmp_path):
    """``data`` loads (and every element reads) or fails with the documented one-line error."""
    tracemalloc.start()
    try:
        if fmt in NAMES:
            try:
                for item in read_image(tmp_path, NAMES[fmt], data):
                    assert np.isfinite(item.array).all()
            except UserError as e:
                assert "\n" not in str(e)
        else:
            try:
                touch(load_bytes(data))
            except SerializationError as e:
                assert "\n" not in str(e)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MAX_PEAK


@pytest.mark.parametrize("fmt", list(VALID))
def test_fuzz_damaged_files(tmp_path, fmt):
    if fmt == "png":          # predict's fallback for interlaced PNGs: imported once, untraced
        try:
            import matplotlib.image  # noqa: F401
        except ImportError:
            pass
    @FUZZ
    @given(damaged(fmt))
    def run(data):
        check_one(fmt, data, tmp_path)
    run()


@pytest.mark.parametrize("fmt", ["minitorch", "torch"])
def test_fuzz_damaged_zip_members(fmt):
    """Damage inside a zip member (with a valid CRC): the manifest, the tree, the pickle."""
    inner = {"minitorch": ("minitorch.json", "data.json"), "torch": ("archive/data.pkl",)}[fmt]

    @FUZZ
    @given(hs.sampled_from(inner), hs.data())
    def run(member, draw):
        z = zipfile.ZipFile(io.BytesIO(VALID[fmt]))
        original = bytearray(z.read(member))
        pos = draw.draw(hs.integers(0, len(original) - 1))
        how = draw.draw(hs.sampled_from(["flip", "cut", "junk"]))
        if how == "flip":
            original[pos] ^= 1 << draw.draw(hs.integers(0, 7))
        elif how == "cut":
            del original[pos:]
        else:
            original[pos:pos + 4] = draw.draw(hs.binary(min_size=1, max_size=4))
        data = rezip(VALID[fmt], lambda n, b: bytes(original) if n == member else b)
        try:
            touch(load_bytes(data))
        except SerializationError as e:
            assert "\n" not in str(e)
    run()


def test_pickle_never_reaches_os_system(monkeypatch):
    """Even a file that names os.system in every position never calls it."""
    calls = []
    monkeypatch.setattr(os, "system", lambda *a: calls.append(a))
    monkeypatch.setattr(pickle, "loads", lambda *a, **k: calls.append(a))
    for body in (G("os", "system") + b"(" + S("x") + b"tR",
                 b"(" + S("x") + G("os", "system") + b"tQ",
                 tensor_op(storage_pid()) + G("os", "system") + b"\x85R"):
        with pytest.raises(SerializationError):
            load_bytes(torch_zip(pickle_of(body), [("data/0", FLOATS6)]))
    assert calls == []


def test_pickle_and_json_size_limits(monkeypatch):
    """A small file cannot make millions of Python objects: sizes and opcodes are capped."""
    from minitorch.serialization import torch_format
    bomb = torch_zip(b"")
    bomb = rezip(bomb, lambda n, b: pickle_of(b"]" + b"(" + b"}" * (17 << 20) + b"e")
                 if n.endswith("data.pkl") else b, method=zipfile.ZIP_DEFLATED)
    assert len(bomb) < 100_000
    refused(bomb, "more than the 16777216 accepted")
    monkeypatch.setattr(torch_format, "MAX_PICKLE_OPS", 1000)
    refused(torch_zip(pickle_of(b"]" + b"(" + b"N" * 2000 + b"e")), "more than 1000 opcodes")
    big_json = rezip(minitorch_file(), lambda n, b: b"[" + b"0," * (9 << 20) + b"0]"
                     if n == "data.json" else b, method=zipfile.ZIP_DEFLATED)
    refused(big_json, "more than the 16777216 accepted")


def test_overlapping_entries_are_refused():
    """Two directory entries pointing at the same bytes (a 'non-recursive' zip bomb)."""
    data = bytearray(torch_file({"a": torch.ones(4), "b": torch.ones(4)}))
    z = zipfile.ZipFile(io.BytesIO(bytes(data)))
    first = z.getinfo("archive/data/0").header_offset
    pos = -1
    while (pos := data.find(b"PK\x01\x02", pos + 1)) >= 0:      # the central directory
        if data[pos + 46:pos + 46 + len("archive/data/1")] == b"archive/data/1":
            data[pos + 42:pos + 46] = struct.pack("<I", first)
    refused(bytes(data), "overlaps")
