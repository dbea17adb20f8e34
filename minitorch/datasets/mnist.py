"""MNIST: the standard IDX files, and a real 5,000-digit subset shipped in the package.

The IDX format is tiny: a 4-byte magic number (``0x00000803`` for 3-D
unsigned bytes), the size of each dimension as big-endian 32-bit integers,
then the raw bytes.  :func:`read_idx` reads it, gzipped or not.

``MNIST(root)`` reads ``train-images-idx3-ubyte`` (and the labels, and the
``t10k`` test files) from ``root``, from ``root/MNIST/raw`` (torchvision's
layout), plain or ``.gz``.  ``MNIST()`` with no root uses the shipped
subset, split once with a fixed seed into 4,000 training and 1,000 test
digits, stratified (400 and 100 per class).
"""

from __future__ import annotations

import gzip
import math
import struct
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from ..ops.creation import from_numpy
from ..tensor import Tensor
from ..utils.data import Dataset

__all__ = ["MNIST", "read_idx", "load_mnist_arrays", "SHIPPED_DIR"]

SHIPPED_DIR = Path(__file__).resolve().parent / "data"
_FILES = {True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
          False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}
_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


# gzip (deflate) never expands more than ~1032 times: a header claiming more than that
# from the file's size is a lie (or a zip bomb), refused before anything is read.
_MAX_GZIP_RATIO = 1032
_CHUNK = 1 << 20


def read_idx(path: Any) -> np.ndarray:
    """Read an IDX file (optionally gzipped) into a NumPy array, checking its header.

    A damaged file (bad magic, truncated, a broken gzip stream, more or fewer
    bytes than its header's shape needs) raises ``ValueError`` with one line
    naming it; a missing or unreadable file raises ``OSError``.  The data is
    read in chunks up to the size the header declares, after checking that
    size against what the file could hold.
    """
    path = Path(path)
    gz = path.suffix == ".gz"
    on_disk = path.stat().st_size
    stream = gzip.open(path, "rb") if gz else open(path, "rb")
    try:
        with stream as f:
            return _read_idx(f, path, gz, on_disk)
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise ValueError(f"{path}: not a readable {'gzip' if gz else 'IDX'} file, truncated or "
                         f"corrupted ({e})") from None


def _read_idx(f: Any, path: Path, gz: bool, on_disk: int) -> np.ndarray:
    head = f.read(4)
    if len(head) < 4:
        raise ValueError(f"{path}: too short to be an IDX file")
    zero, code, ndim = head[0] << 8 | head[1], head[2], head[3]
    if zero != 0 or code not in _DTYPES or not 1 <= ndim <= 4:
        raise ValueError(f"{path}: not an IDX file (bad magic {head.hex()})")
    dims = f.read(4 * ndim)
    if len(dims) < 4 * ndim:
        raise ValueError(f"{path}: truncated IDX header")
    shape = struct.unpack(f">{ndim}I", dims)
    dt = np.dtype(_DTYPES[code])
    expected = math.prod(shape) * dt.itemsize
    most = on_disk * _MAX_GZIP_RATIO if gz else on_disk - 4 - 4 * ndim
    if expected > most:
        raise ValueError(f"{path}: the header says shape {shape} ({expected} bytes), more than "
                         f"the file can hold")
    data = bytearray()
    while len(data) < expected:
        chunk = f.read(min(_CHUNK, expected - len(data)))
        if not chunk:
            break
        data += chunk
    if len(data) != expected or f.read(1):
        raise ValueError(f"{path}: the data does not match the header's shape {shape} "
                         f"({expected} bytes)")
    return np.frombuffer(data, dtype=dt).reshape(shape).astype(dt.newbyteorder("="))  # a copy


def _find(root: Path, name: str) -> Path | None:
    for folder in (root, root / "MNIST" / "raw", root / "raw"):
        for candidate in (folder / name, folder / (name + ".gz")):
            if candidate.exists():
                return candidate
    return None


def _shipped_split(train: bool, seed: int = 0) -> tuple:
    images = read_idx(SHIPPED_DIR / "mnist5k-images-idx3-ubyte.gz")
    labels = read_idx(SHIPPED_DIR / "mnist5k-labels-idx1-ubyte.gz")
    rng = np.random.default_rng(seed)
    train_idx, test_idx = [], []
    for c in range(10):
        idx = np.flatnonzero(labels == c)
        rng.shuffle(idx)
        n_test = len(idx) // 5
        test_idx.append(idx[:n_test])
        train_idx.append(idx[n_test:])
    chosen = np.concatenate(train_idx if train else test_idx)
    rng.shuffle(chosen)
    return images[chosen], labels[chosen]


def load_mnist_arrays(root: Any = None, train: bool = True) -> tuple:
    """``(images uint8 (N, 28, 28), labels uint8 (N,))`` from ``root`` or the shipped subset."""
    if root is None:
        return _shipped_split(train)
    root = Path(root)
    img_name, lbl_name = _FILES[train]
    img_path, lbl_path = _find(root, img_name), _find(root, lbl_name)
    if img_path is None or lbl_path is None:
        raise FileNotFoundError(
            f"MNIST files {img_name}[.gz] and {lbl_name}[.gz] not found in {root} (or "
            f"{root / 'MNIST' / 'raw'}); minitorch never downloads them. Copy the IDX files "
            "there, or leave out the directory to use the 5,000 digits shipped with minitorch.")
    images, labels = read_idx(img_path), read_idx(lbl_path)
    if images.ndim != 3 or labels.ndim != 1 or images.shape[0] != labels.shape[0]:
        raise ValueError(f"MNIST files disagree: images {images.shape}, labels {labels.shape}")
    return images, labels


class MNIST(Dataset):
    """Handwritten digits: ``dataset[i]`` is ``(image, label)``.

    ``image`` is a float32 tensor of shape (1, 28, 28) with values in [0, 1]
    (or whatever ``transform`` returns); ``label`` is an int.  ``root=None``
    uses the shipped 5,000-digit subset.
    """

    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five",
               "6 - six", "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root: Any = None, train: bool = True, transform: Any = None,
                 target_transform: Any = None, download: bool = False) -> None:
        if download:
            raise RuntimeError("minitorch never downloads data; see MNIST's docstring")
        self.root, self.train = root, train
        self.transform, self.target_transform = transform, target_transform
        images, labels = load_mnist_arrays(root, train)
        # Stored once as float32 in [0, 1]; samples are views into it.
        self.data = from_numpy((images.astype(np.float32) / 255.0).reshape(-1, 1, 28, 28))
        self.targets = from_numpy(labels.astype(np.int64))

    def __len__(self) -> int:
        return self.data.shape[0]

    def __getitem__(self, index: int) -> tuple:
        img: Tensor = self.data[index]
        target: Any = int(self.targets[index].item())
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __repr__(self) -> str:
        source = "shipped 5k subset" if self.root is None else str(self.root)
        return (f"Dataset MNIST\n    Number of datapoints: {len(self)}\n    Root location: "
                f"{source}\n    Split: {'Train' if self.train else 'Test'}")
