"""``GradScaler``: loss scaling, so that float16 gradients do not underflow to zero.

float16's smallest normal number is about 6e-5; many gradients are smaller
and would flush to zero.  The remedy (Micikevicius et al., *Mixed Precision
Training*, 2018) is to multiply the loss by a large factor ``S`` before
backward, so every gradient is ``S`` times larger, and divide the
gradients by ``S`` before the optimizer uses them::

    scaler = minitorch.amp.GradScaler("cpu")
    for x, y in data:
        optimizer.zero_grad()
        with minitorch.autocast("cpu", dtype=minitorch.float16):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()    # gradients are S times too large
        scaler.step(optimizer)           # unscale; skip the step if any is inf/NaN
        scaler.update()                  # adapt S

``S`` adapts: if any gradient overflowed (inf or NaN) the step is skipped and
``S`` is multiplied by ``backoff_factor`` (0.5); after ``growth_interval``
steps in a row without overflow, ``S`` is multiplied by ``growth_factor``
(2.0).  ``unscale_`` may be called explicitly before ``step`` (to clip the
true gradients); each optimizer is unscaled at most once per iteration.
"""

from __future__ import annotations

import math
import warnings
from enum import Enum
from typing import Any

from ..autograd.grad_mode import no_grad
from ..cuda import is_available as cuda_is_available
from ..dtype import float16
from ..tensor import Tensor

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


class GradScaler:
    """Dynamic loss scaling for mixed-precision training (PyTorch's ``torch.amp.GradScaler``)."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = str(device)
        self._enabled = enabled
        if self._device == "cuda" and enabled and not cuda_is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
        self._init_scale = float(init_scale)
        self._scale: float | None = None          # made by the first scale()
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._growth_tracker: int | None = None
        self._per_optimizer_states: dict = {}

    # -- scaling -------------------------------------------------------------
    def scale(self, outputs: Any) -> Any:
        """``outputs`` multiplied by the current scale (a tensor, or nested lists/tuples of them)."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._scale = self._init_scale
            self._growth_tracker = self._init_growth_tracker

        def apply(x: Any) -> Any:
            if isinstance(x, Tensor):
                return x * self._scale
            if isinstance(x, (list, tuple)):
                return type(x)(apply(v) for v in x)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)

    def _state(self, optimizer: Any) -> dict:
        return self._per_optimizer_states.setdefault(
            id(optimizer), {"stage": OptState.READY, "found_inf": False})

    def _check_scale(self, funcname: str) -> None:
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  This may indicate "
                                 "your script did not use scaler.scale(loss or outputs) earlier "
                                 "in the iteration.")

    def unscale_(self, optimizer: Any) -> None:
        """Divide the optimizer's gradients by the scale, in place, and note any inf/NaN."""
        if not self._enabled:
            return
        self._check_scale("unscale_")
        state = self._state(optimizer)
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = 1.0 / self._scale
        found_inf = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.grad.dtype is float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    p.grad.mul_(inv_scale)
                    # One reduction per gradient: a sum is finite iff every element is
                    # (an inf or NaN anywhere makes it inf or NaN).
                    if not math.isfinite(float(p.grad.sum())):
                        found_inf = True
        state["found_inf"] = found_inf
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step()`` on unscaled gradients, skipped if any of them is inf or NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale("step")
        state = self._state(optimizer)
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        retval = None
        if not state["found_inf"]:
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: Any = None) -> None:
        """Adapt the scale for the next iteration (or set it to ``new_scale``)."""
        if not self._enabled:
            return
        self._check_scale("update")
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1:
                    raise AssertionError("new_scale should be a single-element tensor")
                new_scale = new_scale.item()
            self._scale = float(new_scale)
        else:
            found_inf = any(s["found_inf"] for s in self._per_optimizer_states.values())
            if found_inf:
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
        self._per_optimizer_states = {}

    # -- settings and state ------------------------------------------------------
    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        """The scale and its settings (empty when disabled), for checkpoints."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale = self._init_scale
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker = self._init_growth_tracker
