"""Helpers for the op tests that run on every device (the ``device`` fixture of conftest.py)."""

from __future__ import annotations

import numpy as np

import minitorch as torch


def cuda_usable() -> bool:
    """Can tensors go to ``cuda`` here (a GPU, or the simulator)?"""
    try:
        return torch.cuda.is_available()
    except Exception:   # pragma: no cover - numba.cuda broken beyond repair
        return False


def on(a, device: str, **kwargs) -> torch.Tensor:
    """A tensor on ``device`` holding the NumPy array (or nested list) ``a``."""
    return torch.tensor(np.asarray(a), device=device, **kwargs)


def host(t: torch.Tensor) -> np.ndarray:
    """``t``'s values as a NumPy array (copied from the device if need be)."""
    return t.detach().cpu().numpy()


def check(t: torch.Tensor, expected, device: str, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    """``t`` lives on ``device`` and holds ``expected`` (values, shape; integers exactly)."""
    assert t.device.type == device
    expected = np.asarray(expected)
    got = host(t)
    assert got.shape == expected.shape
    if expected.dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
