"""Helpers for the op tests that run on every device (the ``device`` fixture of conftest.py)."""

from __future__ import annotations

import os

import numpy as np

import minitorch as torch


def cuda_usable() -> bool:
    """Can tensors go to ``cuda`` here (a GPU, or the simulator)?"""
    try:
        return torch.cuda.is_available()
    except Exception:   # pragma: no cover - numba.cuda broken beyond repair
        return False


def simulated() -> bool:
    """Is ``cuda`` Numba's CUDA simulator here (``NUMBA_ENABLE_CUDASIM=1``)?"""
    return os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


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


def _weights(out: torch.Tensor) -> torch.Tensor:
    """Fixed, distinct weights for ``sum(out * w)``: every output element counts differently."""
    w = np.cos(np.arange(out.numel()) + 0.5).reshape(tuple(out.shape))
    return torch.tensor(w, dtype=out.dtype, device=out.device)


def _as_tuple(inputs) -> tuple:
    """``inputs`` as gradcheck takes them: a tuple of arguments, or one tensor."""
    return tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)


def _off_the_cpu(inputs) -> bool:
    """Is any tensor among ``inputs`` on another device than the CPU?"""
    return any(isinstance(x, torch.Tensor) and x.device.type != "cpu" for x in _as_tuple(inputs))


def _weighted_gradients(outs: list, inputs: tuple, **kwargs) -> tuple:
    """The gradient of ``sum(out * w)`` over ``outs`` for each input that requires grad
    (None where it got none); ``()`` when no output requires grad."""
    terms = [(o * _weights(o)).sum() for o in outs if o.requires_grad]
    tensors = [x for x in inputs if isinstance(x, torch.Tensor) and x.requires_grad]
    if not terms:
        return ()
    return torch.autograd.grad(sum(terms[1:], terms[0]), tensors, allow_unused=True, **kwargs)


def _outputs_and_gradients(fn, inputs: tuple) -> tuple:
    """``fn(*inputs)``'s floating outputs as NumPy arrays, and the gradient of
    ``sum(out * w)`` for each input that requires grad (None where it got none)."""
    outs = [o for o in _as_tuple(fn(*inputs))
            if isinstance(o, torch.Tensor) and o.is_floating_point()]
    grads = _weighted_gradients(outs, inputs)
    return [host(o) for o in outs], [None if g is None else host(g) for g in grads]


def _on_cpu_as_laid_out(x: torch.Tensor) -> torch.Tensor:
    """A CPU leaf with ``x``'s whole storage and the same view of it (size, stride,
    offset): ops that read the storage (``as_strided``) then see the same elements."""
    n = x.untyped_storage().nbytes() // x.element_size()
    storage = x.detach().as_strided((n,), (1,), 0).cpu()
    return storage.as_strided(x.size(), x.stride(), x.storage_offset()) \
        .detach().requires_grad_(x.requires_grad)


def matches_cpu_gradients(fn, inputs, rtol: float = 1e-7, atol: float = 1e-10) -> bool:
    """``fn``'s outputs and gradients on the inputs' device equal the CPU's.

    The op tests check gradients against float64 finite differences on the
    CPU.  On ``cuda`` they compare with the CPU instead: a finite-difference
    check runs the function twice per input element, hundreds of launches
    that the simulator runs as Python threads.  The CPU case of the same test
    has checked the CPU's gradients, so equal gradients are correct ones.
    ``fn`` runs for the CPU with the default device set to ``cpu`` (tensors it
    makes go there too).
    """
    inputs = _as_tuple(inputs)
    here = _outputs_and_gradients(fn, inputs)
    previous = torch.get_default_device()
    torch.set_default_device("cpu")
    try:
        cpu_inputs = tuple(_on_cpu_as_laid_out(x) if isinstance(x, torch.Tensor) else x
                           for x in inputs)
        there = _outputs_and_gradients(fn, cpu_inputs)
    finally:
        torch.set_default_device(previous)
    for got, expected in zip(here[0] + here[1], there[0] + there[1], strict=True):
        assert (got is None) == (expected is None)
        if got is not None:
            np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    return True


def gradcheck(fn, inputs, **kwargs) -> bool:
    """``minitorch.autograd.gradcheck`` on the CPU; :func:`matches_cpu_gradients` on ``cuda``."""
    if _off_the_cpu(inputs):
        return matches_cpu_gradients(fn, inputs)
    return torch.autograd.gradcheck(fn, inputs, **kwargs)


def _first_gradients(fn):
    """A function giving ``fn``'s input gradients, as a graph (for second derivatives)."""
    def gradients(*inputs):
        outs = [o for o in _as_tuple(fn(*inputs)) if isinstance(o, torch.Tensor)]
        grads = _weighted_gradients(outs, inputs, create_graph=True)
        return tuple(g for g in grads if g is not None)
    return gradients


def gradgradcheck(fn, inputs, **kwargs) -> bool:
    """``minitorch.autograd.gradgradcheck`` on the CPU; on ``cuda``, the first and second
    derivatives equal the CPU's (see :func:`matches_cpu_gradients`)."""
    if _off_the_cpu(inputs):
        return matches_cpu_gradients(_first_gradients(fn), inputs)
    return torch.autograd.gradgradcheck(fn, inputs, **kwargs)


#: The markers of the op tests (course modules 1-3, 5 and 6's parts of the suite).
OP_TEST_MARKERS = ("tensor", "ops", "autograd", "nn", "optim")


def not_on_both_devices(items) -> list:
    """Node ids of the op tests that neither run on both devices nor say why not.

    An op test takes the ``device`` fixture (or ``default_device``, which uses
    it), so it runs on ``cpu`` and on ``cuda``, or carries
    ``@pytest.mark.cpu_only("why")``.  The course's task tests
    (``tests/course/``) grade a student's own CPU code and are not op tests.
    """
    bad = []
    for item in items:
        if item.nodeid.startswith("tests/course/") \
                or not any(item.get_closest_marker(m) for m in OP_TEST_MARKERS):
            continue
        cpu_only = item.get_closest_marker("cpu_only")
        if "device" not in getattr(item, "fixturenames", ()) and not (cpu_only and cpu_only.args):
            bad.append(item.nodeid)
    return bad
