"""Random streams: ``Generator``, ``manual_seed`` and the RNG state (PyTorch's ``torch/random.py``).

Random numbers in minitorch come from a *counter-based* generator: a
:class:`Generator` is just ``(seed, offset)``, and the k-th number of the
stream is a hash of ``(seed, offset + k)`` (the hash is in the kernels,
``backends/rng.py``).  Filling a tensor of n numbers advances the offset by n,
so results depend only on the seed and on how many numbers were drawn before,
never on threads or devices.  The sampling ops (``rand``, ``randn``,
``bernoulli``, ``uniform_``, ...) are in ``ops/sampling.py``.

This module sits beside the tensor header (layer 5): it keeps state and
imports nothing above ``tensor_base``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .device import CPU, as_device
from .dtype import int64
from .storage import UntypedStorage
from .tensor_base import TensorBase

__all__ = ["Generator", "default_generator", "default_generators", "manual_seed", "seed",
           "initial_seed", "get_rng_state", "set_rng_state", "cuda_generator", "seed_cuda",
           "generator_for"]


class Generator:
    """A random stream: ``(seed, offset)``; see the module docstring.

    ``manual_seed(s)`` restarts the stream; ``get_state``/``set_state`` save and
    restore it (as a 2-element int64 tensor).
    """

    def __init__(self, device: Any = "cpu") -> None:
        self.device = as_device(device)
        self._seed = 67280421310721     # PyTorch's default seed
        self._offset = 0

    def manual_seed(self, seed: int) -> "Generator":
        seed = int(seed)
        if not -0x8000_0000_0000_0000 <= seed <= 0xFFFF_FFFF_FFFF_FFFF:
            raise RuntimeError(f"Overflow when unpacking long long: {seed}")
        self._seed = seed & 0xFFFF_FFFF_FFFF_FFFF
        self._offset = 0
        return self

    def seed(self) -> int:
        s = time.time_ns() & 0xFFFF_FFFF_FFFF_FFFF
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> TensorBase:
        signed_seed = self._seed - (1 << 64) if self._seed >= (1 << 63) else self._seed
        state = np.array([signed_seed, self._offset], dtype=np.int64)
        return TensorBase._make(UntypedStorage(state, CPU), (2,), (1,), 0, int64)

    def set_state(self, state: TensorBase) -> "Generator":
        seed, offset = (int(v) for v in state.tolist())
        self._seed = seed & 0xFFFF_FFFF_FFFF_FFFF
        self._offset = offset
        return self

    def _take(self, n: int) -> tuple:
        """Reserve ``n`` counters; returns the (seed, offset) to fill with."""
        start = self._offset
        self._offset += n
        return np.uint64(self._seed), np.uint64(start)


default_generator = Generator()

# One default generator per CUDA device, as in PyTorch (``minitorch.cuda.manual_seed``),
# made on first use and started at ``_cuda_seed``.  Every generator computes the same
# stream from the same seed, so a seed gives the same numbers on every device.
_cuda_generators: dict = {}
_cuda_seed = default_generator.initial_seed()


def cuda_generator(device: Any) -> Generator:
    """The default generator of a CUDA device (``minitorch.cuda.default_generators``)."""
    dev = as_device(device)
    gen = _cuda_generators.get(dev)
    if gen is None:
        gen = _cuda_generators[dev] = Generator(dev).manual_seed(_cuda_seed)
    return gen


def default_generators() -> list:
    """The default generator of the CPU and those of the CUDA devices used so far."""
    return [default_generator, *_cuda_generators.values()]


def seed_cuda(seed: int, device: Any = None) -> None:
    """Seed the default generator of one CUDA device, or (``device=None``) of all of them."""
    global _cuda_seed
    if device is not None:
        cuda_generator(device).manual_seed(seed)
        return
    _cuda_seed = Generator().manual_seed(seed).initial_seed()
    for gen in _cuda_generators.values():
        gen.manual_seed(seed)


def manual_seed(seed: int) -> Generator:
    """Seed the default generators of the CPU and of every CUDA device (as PyTorch does)."""
    default_generator.manual_seed(seed)
    seed_cuda(seed)
    return default_generator


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> TensorBase:
    return default_generator.get_state()


def set_rng_state(state: TensorBase) -> None:
    default_generator.set_state(state)


def generator_for(generator: Generator | None, device: Any = None) -> Generator:
    """The generator to draw from for a tensor on ``device`` (checked against ``generator``)."""
    dev = as_device(device) if device is not None else None
    if generator is None:
        if dev is not None and dev.type == "cuda":
            return cuda_generator(dev)
        return default_generator
    if dev is not None and generator.device.type != dev.type:
        raise RuntimeError(f"Expected a '{dev.type}' device type for generator but found "
                           f"'{generator.device.type}'")
    return generator
