"""Anomaly detection: find the forward operation whose backward produced NaN.

When enabled, every recorded node keeps the stack trace of the forward call
that created it, and the backward pass checks each gradient a node returns.
A NaN raises ``RuntimeError`` naming the node (for example
``Function 'DivBackward0' returned nan values in its 0th output.``), and the
forward trace is shown as a warning so you can see which line of your
model caused it.  It slows everything down: use it for debugging only.
"""

from __future__ import annotations

from typing import Any

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]


class _State:
    enabled = False
    check_nan = True


STATE = _State()


def is_anomaly_enabled() -> bool:
    return STATE.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return STATE.check_nan


class detect_anomaly:
    """Context manager (and decorator) that enables anomaly detection inside it."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        self._prev = (STATE.enabled, STATE.check_nan)
        STATE.enabled, STATE.check_nan = True, self.check_nan

    def __exit__(self, *exc: Any) -> None:
        STATE.enabled, STATE.check_nan = self._prev

    def __call__(self, fn: Any) -> Any:
        import functools
        check_nan = self.check_nan

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with detect_anomaly(check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Turn anomaly detection on or off; as a context manager it restores the old setting."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._prev = (STATE.enabled, STATE.check_nan)
        STATE.enabled, STATE.check_nan = bool(mode), check_nan

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        STATE.enabled, STATE.check_nan = self._prev
