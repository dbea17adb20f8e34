"""Tensors as MPI buffers, without copies where possible.

MPI reads and writes raw memory: a start address, a count and an element
type.  A contiguous CPU tensor already *is* such a buffer, so it goes to MPI
as the NumPy array that ``tensor.detach().numpy()`` returns, which shares the
tensor's memory: MPI writes the result straight into the tensor.  Anything
else (a strided view, a tensor on a GPU) is *staged*: copied into a
contiguous host array, communicated, and copied back when the collective
completes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _lower

__all__ = ["Buffer", "as_buffer", "check_tensor", "check_tensor_list"]


def _tensor_type() -> type:
    return _lower.Tensor


def check_tensor(t: Any, name: str) -> None:
    """A ``TypeError`` unless ``t`` is a tensor (PyTorch's message)."""
    if not isinstance(t, _tensor_type()):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"Tensor but got {type(t)} instead.")


def check_tensor_list(ts: Any, name: str) -> None:
    """A ``TypeError`` unless ``ts`` is a list of tensors."""
    if not isinstance(ts, list):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[Tensor] but got {type(ts)} instead.")
    tensor = _tensor_type()
    if not all(isinstance(t, tensor) for t in ts):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[Tensor] but got {type(ts)} with elements of type "
                        f"{[type(t) for t in ts]}.")


class Buffer:
    """The memory MPI uses for a tensor: ``array``, and ``writeback()`` for staged ones.

    ``staged`` is ``False`` when ``array`` *is* the tensor's memory (contiguous
    and on the CPU): then nothing is copied in either direction.
    """

    def __init__(self, tensor: Any, array: np.ndarray, staged: bool) -> None:
        self.tensor = tensor
        self.array = array
        self.staged = staged

    @property
    def mpi_array(self) -> np.ndarray:
        """``array`` as MPI sees it: bools travel as bytes (MPI has no boolean reductions
        on C ``bool`` in every library; on bytes, logical OR/AND work everywhere)."""
        return self.array.view(np.uint8) if self.array.dtype == np.bool_ else self.array

    def writeback(self) -> None:
        """Copy a staged result back into the tensor (no-op when MPI wrote in place)."""
        if self.staged:
            with _lower.no_grad():
                self.tensor.detach().copy_(_lower.from_numpy(self.array))


def as_buffer(tensor: Any) -> Buffer:
    """The buffer MPI should read and write for ``tensor`` (see the module doc)."""
    t = tensor.detach()         # shares memory; .numpy() refuses tensors that need grad
    if t.device.type == "cpu" and t.is_contiguous():
        arr = t.numpy()
        if arr.flags.c_contiguous and arr.flags.writeable:
            return Buffer(tensor, arr, staged=False)
    arr = np.array(t.numpy(force=True), order="C", copy=True)
    return Buffer(tensor, arr, staged=True)
