"""``minitorch predict``: run a saved model on your own images.

Inputs, by file type:

* ``.png``: one image of a digit, any size, dark on light or light on dark;
* ``.npy``: a NumPy array of one or more 28x28 images ((28, 28), (N, 28, 28),
  (N, 1, 28, 28), (784,) or (N, 784)), or of 2-D points (N, 2) for the
  models of the 2-D tasks;
* an IDX file (``*-idx3-ubyte`` or ``.idx``, optionally gzipped), as MNIST
  ships: every image in it.

An MNIST digit is a light digit on a black background, scaled to fit a
20x20 box and centred by its centre of mass in a 28x28 frame, with values
in [0, 1].  :func:`to_mnist` brings any other picture of a digit to that
form (inverting a dark-on-light drawing), because a network only knows the
kind of input it was trained on.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from ..datasets.mnist import read_idx
from .checks import UserError, check_input_file
from .png import UnsupportedPNG, read_png

__all__ = ["load_inputs", "to_mnist", "resize", "top_k", "Input", "read_npy"]


@dataclass
class Input:
    """One sample to classify: its name (file, and index inside the file) and its array."""

    name: str
    array: np.ndarray       # (1, 28, 28) float32 image, or (2,) float32 point


def _read_png(path: str) -> np.ndarray:
    try:
        return read_png(path)
    except UnsupportedPNG as first:
        try:                                   # interlaced and other rare PNGs
            import matplotlib.image
        except ImportError:
            raise UserError(str(first)) from None
        try:
            image = np.asarray(matplotlib.image.imread(path), np.float32)
        except Exception:                      # noqa: BLE001  (any decoder failure: one line)
            raise UserError(str(first)) from None
        if image.ndim not in (2, 3) or image.size == 0:
            raise UserError(str(first)) from None
        return image
    except ValueError as e:                    # a damaged file
        raise UserError(str(e)) from None


def _grey(image: np.ndarray) -> np.ndarray:
    """(H, W[, C]) in [0, 1] to grey (H, W); transparent pixels count as the page (white)."""
    if image.ndim == 2:
        return image
    colour, alpha = (image[..., :-1], image[..., -1:]) if image.shape[-1] in (2, 4) \
        else (image, None)
    grey = colour.mean(-1) if colour.shape[-1] == 1 else \
        colour[..., :3] @ np.array([0.299, 0.587, 0.114], np.float32)
    if alpha is not None:
        grey = grey * alpha[..., 0] + (1 - alpha[..., 0])
    return grey


def resize(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """Resize a 2-D image by area averaging (bilinear on a 4x finer grid, then 4x4 means).

    >>> resize(np.eye(2, dtype=np.float32), 4, 4).round(2).shape
    (4, 4)
    """
    fine = 4
    h, w = image.shape
    ys = (np.arange(height * fine) + 0.5) * h / (height * fine) - 0.5
    xs = (np.arange(width * fine) + 0.5) * w / (width * fine) - 0.5
    ys, xs = np.clip(ys, 0, h - 1), np.clip(xs, 0, w - 1)
    y0, x0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    wy, wx = (ys - y0)[:, None], (xs - x0)[None, :]
    top = image[y0][:, x0] * (1 - wx) + image[y0][:, x1] * wx
    bottom = image[y1][:, x0] * (1 - wx) + image[y1][:, x1] * wx
    sampled = top * (1 - wy) + bottom * wy
    return sampled.reshape(height, fine, width, fine).mean((1, 3)).astype(np.float32)


def to_mnist(image: np.ndarray) -> np.ndarray:
    """A picture of one digit, (H, W) or (H, W, C) in [0, 1], as an MNIST-style (28, 28) image.

    28x28 light-on-dark images are taken as they are.  Others are inverted if
    their border is light (ink on paper), cropped to the ink, scaled so the
    longer side is 20 pixels and centred by centre of mass, as MNIST was made.
    """
    grey = _grey(image).astype(np.float32)
    border = np.concatenate([grey[0], grey[-1], grey[:, 0], grey[:, -1]])
    if border.mean() > 0.5:
        grey = 1.0 - grey
    if grey.shape == (28, 28):
        return grey
    ink = grey > 0.2 * grey.max() if grey.max() > 0 else np.zeros_like(grey, bool)
    if not ink.any():
        return resize(grey, 28, 28)
    rows, cols = np.flatnonzero(ink.any(1)), np.flatnonzero(ink.any(0))
    crop = grey[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
    scale = 20 / max(crop.shape)
    h, w = max(1, round(crop.shape[0] * scale)), max(1, round(crop.shape[1] * scale))
    digit = resize(crop, h, w)
    frame = np.zeros((28, 28), np.float32)
    top, left = (28 - h) // 2, (28 - w) // 2
    frame[top:top + h, left:left + w] = digit
    # Centre by mass, as MNIST does: shift so the centre of mass sits at (14, 14).
    total = frame.sum()
    if total > 0:
        cy = (frame.sum(1) * np.arange(28)).sum() / total
        cx = (frame.sum(0) * np.arange(28)).sum() / total
        dy = int(np.clip(round(13.5 - cy), -top, 28 - h - top))
        dx = int(np.clip(round(13.5 - cx), -left, 28 - w - left))
        frame = np.roll(frame, (dy, dx), axis=(0, 1))
    return np.clip(frame, 0, 1)


def _scale(array: np.ndarray) -> np.ndarray:
    """Integers (0..255) or floats to float32 in [0, 1]."""
    if array.dtype == np.uint8 or (array.dtype.kind in "iu"):
        return array.astype(np.float32) / 255
    array = array.astype(np.float32)
    return array / 255 if array.size and array.max() > 1.5 else array


def _images_from_array(array: np.ndarray, path: str) -> list[np.ndarray]:
    if array.shape == (28, 28) or array.shape == (784,):
        stack = array.reshape(1, 28, 28)
    elif array.ndim == 3 and array.shape[1:] == (28, 28):
        stack = array
    elif array.ndim == 4 and array.shape[1:] == (1, 28, 28):
        stack = array[:, 0]
    elif array.ndim == 2 and array.shape[1] == 784:
        stack = array.reshape(-1, 28, 28)
    else:
        raise UserError(f"{path}: expected 28x28 images ((28, 28), (N, 28, 28), (N, 1, 28, 28), "
                        f"(784,) or (N, 784)), got shape {array.shape}")
    stack = _scale(stack)
    return [s for s in stack]


def read_npy(path: str) -> np.ndarray:
    """A ``.npy`` file of numbers, checked before NumPy reads it; anything else: one line.

    ``np.load`` trusts the file: a 100-byte file declaring a header of 600 MB
    or data of a terabyte makes it allocate that first.  So the header's
    length is checked here, then its shape and dtype against the file's size;
    no pickles (object arrays), only booleans, integers and floats.
    """
    size = os.path.getsize(path)
    try:
        with open(path, "rb") as f:
            magic = f.read(8)
            if len(magic) < 8 or not magic.startswith(b"\x93NUMPY") or \
                    (magic[6], magic[7]) not in ((1, 0), (2, 0), (3, 0)):
                raise UserError(f"{path}: not a .npy file (bad magic)")
            width = 2 if magic[6] == 1 else 4
            length = int.from_bytes(f.read(width), "little")
            if length > min(size, 1 << 16):
                raise UserError(f"{path}: not a readable .npy file (a header of {length} bytes)")
            f.seek(0)
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, _, dt = np.lib.format.read_array_header_1_0(f)
            else:
                shape, _, dt = np.lib.format.read_array_header_2_0(f)
            if dt.kind not in "biuf" or dt.hasobject:
                raise UserError(f"{path}: an array of {dt}, not of numbers")
            need = math.prod(shape) * dt.itemsize
            have = size - f.tell()
            if need != have:
                raise UserError(f"{path}: the header says shape {shape} of {dt} ({need} "
                                f"bytes), but the file holds {have}")
        return np.load(path, allow_pickle=False)
    except UserError:
        raise
    except OSError as e:
        raise UserError(f"{path}: cannot read it ({e.strerror or e})") from None
    except Exception as e:        # noqa: BLE001  (NumPy's header parser raises many types)
        raise UserError(f"{path}: not a readable .npy file "
                        f"({str(e).splitlines()[0][:120] if str(e) else type(e).__name__})") \
            from None


def _is_idx(path: str) -> bool:
    name = os.path.basename(path).lower().removesuffix(".gz")
    return name.endswith(".idx") or "-idx" in name or name.endswith("ubyte")


def load_inputs(paths: list[str], kind: str) -> list[Input]:
    """Read every file in ``paths``: MNIST-style images (``kind="image"``) or 2-D points.

    Raises :class:`~minitorch.demos.checks.UserError` with one line for a
    missing, unreadable or unsuitable file.
    """
    inputs: list[Input] = []
    for path in paths:
        check_input_file(path, "IMAGE")
        lower = path.lower()
        if lower.endswith(".npy"):
            array = read_npy(path)
            if kind == "point":
                if array.ndim not in (1, 2) or array.shape[-1] != 2:
                    raise UserError(f"{path}: expected 2-D points, shape (2,) or (N, 2), got "
                                    f"shape {array.shape}")
                points = np.asarray(array, np.float32).reshape(-1, 2)
                inputs += [Input(f"{path}[{i}]" if len(points) > 1 else path, p)
                           for i, p in enumerate(points)]
                continue
            images = _images_from_array(array, path)
        elif kind == "point":
            raise UserError(f"{path}: this model classifies 2-D points; give a .npy file of "
                            "shape (N, 2)")
        elif lower.endswith(".png"):
            images = [to_mnist(_read_png(path))]
        elif _is_idx(path):
            try:
                array = read_idx(path)
            except (ValueError, OSError) as e:
                raise UserError(str(e)) from None
            if array.ndim == 1:
                raise UserError(f"{path}: an IDX file of labels, not of images")
            images = _images_from_array(array, path)
        else:
            ext = os.path.splitext(path)[1] or "no extension"
            raise UserError(f"{path}: unsupported file type ({ext}); use .png, .npy or an "
                            "IDX file")
        inputs += [Input(f"{path}[{i}]" if len(images) > 1 else path, img[None])
                   for i, img in enumerate(images)]
    return inputs


def top_k(probs: np.ndarray, k: int) -> list[tuple[int, float]]:
    """The ``k`` most probable classes of one row of probabilities, most probable first.

    >>> top_k(np.array([0.1, 0.7, 0.2]), 2)
    [(1, 0.7), (2, 0.2)]
    """
    order = np.argsort(-probs, kind="stable")[:k]
    return [(int(c), float(probs[c])) for c in order]
