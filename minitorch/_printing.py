"""Turning tensor values into text, exactly the way PyTorch prints them.

``repr(tensor)`` looks simple (``tensor([1., 2.])``) but PyTorch follows a
handful of precise rules, and this module reproduces them with plain NumPy so
that minitorch output can be compared character for character with PyTorch.

The rules, in the order they are applied
----------------------------------------

1. **Summarising.**  A tensor with more than ``threshold`` elements is
   *summarised*: along every dimension only the first and last ``edgeitems``
   entries are shown and the middle becomes ``...``.

2. **One format for all elements.**  Every element is printed with the same
   style and right-aligned to the same width, so columns line up.  For
   floating point tensors the style is chosen by looking at the finite,
   non-zero values that will actually be shown (:class:`_ElementFormatter`):

   * all of them are whole numbers -> *integer mode*: ``1.``, ``-3.``;
   * otherwise *fixed point* with ``precision`` digits: ``0.5000``;
   * *scientific notation* (``1.0000e-05``) when the values span more than
     three orders of magnitude (max / min > 1000), or are huge (> 1e8), or
     (not in integer mode) tiny (< 1e-4).  ``sci_mode=True/False`` in
     :func:`set_printoptions` overrides this choice.

   ``nan``, ``inf`` and zeros are ignored while choosing, because they say
   nothing about the magnitude of the data.

3. **Layout.**  Vectors are wrapped so that lines fit in ``linewidth``
   characters; a tensor of dimension ``d`` separates its sub-blocks with
   ``d - 1`` newlines, which gives the familiar blank lines between matrices.

4. **Suffixes.**  Extra information such as ``dtype=minitorch.float64`` or
   ``requires_grad=True`` follows the data, moving to a new line when it
   would overflow ``linewidth``.

This module knows nothing about the ``Tensor`` class: the tensor hands over a
NumPy array of its values plus the suffixes it wants shown, see
:func:`format_tensor`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["set_printoptions", "get_printoptions", "format_tensor"]


# ---------------------------------------------------------------------------
# Print options
# ---------------------------------------------------------------------------

@dataclass
class _PrintOptions:
    """The global settings changed by :func:`set_printoptions`."""

    precision: int = 4          # digits after the decimal point
    threshold: float = 1000     # more elements than this -> summarise
    edgeitems: int = 3          # entries kept at each end when summarising
    linewidth: int = 80         # characters per line, used for wrapping
    sci_mode: bool | None = None  # None = choose automatically


_OPTIONS = _PrintOptions()

# The named profiles of ``torch.set_printoptions``.  ``sci_mode`` is not part
# of a profile: it is reset by every call (see set_printoptions).
_PROFILES: dict[str, dict[str, float]] = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Change how tensors are printed (same meaning as ``torch.set_printoptions``).

    Args:
        precision: digits after the decimal point for floats (default 4).
        threshold: tensors with more elements than this are summarised
            (default 1000).
        edgeitems: how many entries to keep at the start and end of each
            dimension when summarising (default 3).
        linewidth: characters per line before wrapping (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``; sets the four
            options above at once, then any explicitly given option wins.
            ``"full"`` never summarises.  Like PyTorch, an unknown name is
            silently ignored.
        sci_mode: ``True`` forces scientific notation, ``False`` forbids it,
            ``None`` lets the formatter decide.  Note: as in PyTorch, this
            option is *always* assigned, so any call that leaves it out
            switches back to automatic mode.
    """
    if profile in _PROFILES:
        for name, value in _PROFILES[profile].items():
            setattr(_OPTIONS, name, value)
    if precision is not None:
        _OPTIONS.precision = precision
    if threshold is not None:
        _OPTIONS.threshold = threshold
    if edgeitems is not None:
        _OPTIONS.edgeitems = edgeitems
    if linewidth is not None:
        _OPTIONS.linewidth = linewidth
    _OPTIONS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """Return the current print options as a new dict.

    >>> get_printoptions()
    {'precision': 4, 'threshold': 1000, 'edgeitems': 3, 'linewidth': 80, 'sci_mode': None}
    """
    return asdict(_OPTIONS)


# ---------------------------------------------------------------------------
# Choosing one format for every element
# ---------------------------------------------------------------------------

class _ElementFormatter:
    """Formats single elements so that they all share one style and width.

    It is built from the values that will be *shown* (after summarising), so
    a huge value hidden behind ``...`` does not force scientific notation.
    """

    def __init__(self, shown: np.ndarray, is_float: bool) -> None:
        self.is_float = is_float
        self.int_mode = True    # floats that are all whole numbers print as "3."
        self.sci_mode = False
        self.width = 1

        if not is_float:
            # ints and bools: the width is simply the longest ``str(value)``.
            for value in shown.ravel().tolist():
                self.width = max(self.width, len(str(value)))
            return

        precision = _OPTIONS.precision
        # Zeros, nan and inf do not tell us anything about the magnitude of
        # the data, so only the finite non-zero values choose the style.
        informative = shown[np.isfinite(shown) & (shown != 0)]
        if informative.size > 0:
            magnitudes = np.abs(informative).astype(np.float64)
            smallest, largest = magnitudes.min(), magnitudes.max()
            self.int_mode = bool(np.all(informative == np.ceil(informative)))
            if _OPTIONS.sci_mode is not None:
                self.sci_mode = _OPTIONS.sci_mode      # the user decided
            else:
                # Dividing two float64 magnitudes may overflow to inf, which
                # still correctly means "spans many decades".
                with np.errstate(over="ignore"):
                    ratio = largest / smallest
                spans_many_decades = ratio > 1000.0 or largest > 1.0e8
                if self.int_mode:
                    self.sci_mode = bool(spans_many_decades)
                else:
                    self.sci_mode = bool(spans_many_decades or smallest < 1.0e-4)

            # The width is measured on the finite non-zero values only (as
            # PyTorch does), so e.g. "nan" or "-0." may stick out.
            for value in informative.tolist():
                if self.sci_mode:
                    text = f"{value:.{precision}e}"
                elif self.int_mode:
                    text = f"{value:.0f}."   # the "." marks a float
                else:
                    text = f"{value:.{precision}f}"
                self.width = max(self.width, len(text))
        # With nothing informative to show (only zeros, nan, inf) the
        # defaults stay: integer mode, no scientific notation, even if
        # sci_mode=True was requested; PyTorch behaves the same way.

    def format(self, value: float | int | bool) -> str:
        """Return ``value`` as text, right-aligned to the common width."""
        if not self.is_float:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:.{_OPTIONS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."   # "3." not "3": show that it is a float
        else:
            text = f"{value:.{_OPTIONS.precision}f}"
        return text.rjust(self.width)


# ---------------------------------------------------------------------------
# Laying the elements out
# ---------------------------------------------------------------------------

def _kept_indices(length: int, summarize: bool) -> list[int]:
    """Indices shown along a dimension of size ``length``."""
    edge = _OPTIONS.edgeitems
    if summarize and length > 2 * edge:
        return list(range(edge)) + list(range(length - edge, length))
    return list(range(length))


def _shown_values(values: np.ndarray, summarize: bool) -> np.ndarray:
    """The elements that will appear in the output (the rest hide behind ...).

    Summarising keeps the same indices along each dimension independently,
    so ``np.ix_`` can pick them all at once.
    """
    if values.ndim == 0:
        return values
    kept = [_kept_indices(length, summarize) for length in values.shape]
    return values[np.ix_(*kept)]


def _format_vector(values: np.ndarray, indent: int, summarize: bool,
                   formatter: _ElementFormatter) -> str:
    """Format a 1-d array, wrapping it to the line width.

    ``indent`` is the column where the opening ``[`` stands, so wrapped
    lines start at ``indent + 1``, under the first element.
    """
    edge = _OPTIONS.edgeitems
    length = values.shape[0]
    if summarize and edge == 0:
        items = ["..."]
    elif summarize and length > 2 * edge:
        items = ([formatter.format(v) for v in values[:edge].tolist()]
                 + [" ..."]   # PyTorch pads the ellipsis with one space
                 + [formatter.format(v) for v in values[length - edge:].tolist()])
    else:
        items = [formatter.format(v) for v in values.tolist()]

    # Every element takes its width plus ", " after it.
    per_line = max(1, math.floor((_OPTIONS.linewidth - indent) / (formatter.width + 2)))
    lines = [", ".join(items[start:start + per_line])
             for start in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _format_block(values: np.ndarray, indent: int, summarize: bool,
                  formatter: _ElementFormatter) -> str:
    """Format an array of any dimension as nested brackets."""
    if values.ndim == 0:
        return formatter.format(values.item())
    if values.ndim == 1:
        return _format_vector(values, indent, summarize, formatter)

    edge = _OPTIONS.edgeitems
    length = values.shape[0]
    if summarize and length > 2 * edge:
        blocks = ([_format_block(values[i], indent + 1, summarize, formatter)
                   for i in range(edge)]
                  + ["..."]
                  + [_format_block(values[i], indent + 1, summarize, formatter)
                     for i in range(length - edge, length)])
    else:
        blocks = [_format_block(values[i], indent + 1, summarize, formatter)
                  for i in range(length)]

    # A d-dimensional block separates its children by d - 1 newlines: one
    # for rows of a matrix, one blank line between matrices, and so on.
    separator = "," + "\n" * (values.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(blocks) + "]"


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """Append ``, suffix`` items and the closing parenthesis to ``text``.

    A suffix moves to its own line (indented by ``indent``) when it would
    not fit.  The length of the current last line is measured the way
    PyTorch measures it, which counts two characters more than are really
    there for the first line; copying this keeps our line breaks identical.
    """
    pieces = [text]
    last_line_length = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_length + len(suffix) + 2 > _OPTIONS.linewidth:
            pieces.append(",\n" + " " * indent + suffix)
            last_line_length = indent + len(suffix)
        else:
            pieces.append(", " + suffix)
            last_line_length += len(suffix) + 2
    pieces.append(")")
    return "".join(pieces)


# ---------------------------------------------------------------------------
# Public entry point
# ---------------------------------------------------------------------------

_KINDS = ("float", "int", "bool")


def _as_printable(values: np.ndarray, kind: str) -> np.ndarray:
    """Convert ``values`` to a NumPy dtype that matches the tensor ``kind``."""
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
    if kind == "bool":
        return values.astype(np.bool_, copy=False)
    if kind == "int":
        if values.dtype.kind in "iu":
            return values
        return values.astype(np.int64)
    # kind == "float".  PyTorch prints half precision tensors after
    # converting them to float32, and so do we.
    if values.dtype == np.float16:
        return values.astype(np.float32)
    if values.dtype.kind != "f":
        return values.astype(np.float64)
    return values


def format_tensor(
    values: np.ndarray,
    *,
    kind: str,
    suffixes: list[str],
    prefix: str = "tensor(",
    indent: int | None = None,
) -> str:
    """Return the text PyTorch's ``repr(tensor)`` would give for these values.

    Args:
        values: the tensor's elements, with the tensor's shape (0-d and
            empty arrays are fine).
        kind: ``"float"``, ``"int"`` or ``"bool"``: the category of the
            tensor's dtype.  It decides the element style.
        suffixes: already formatted trailing items chosen by the caller, in
            order, e.g. ``["dtype=minitorch.float64", "requires_grad=True"]``.
            Following PyTorch, the caller should list ``device=...`` first,
            then ``dtype=...`` (for non-empty tensors only when the dtype is
            not float32, int64 or bool; for empty tensors whenever it is not
            float32), then ``grad_fn=<...>`` or ``requires_grad=True``.
        prefix: the text before the data.  It may span several lines, as in
            ``"Parameter containing:\\ntensor("``; only its last line counts
            for indentation and line-length measurements.
        indent: the column where continuation lines start; by default the
            length of the last line of ``prefix`` (7 for ``"tensor("``).

    This function adds one suffix itself: ``size=(...)``, shown for empty
    tensors whose shape is not ``(0,)`` and for every tensor when
    ``edgeitems`` is 0 (then all data is hidden behind ``...``).  It goes
    after any ``device=`` suffix and before the others, as in PyTorch.

    >>> format_tensor(np.array([[1.0, 2.5]]), kind="float", suffixes=[])
    'tensor([[1.0000, 2.5000]])'
    """
    values = _as_printable(np.asarray(values), kind)
    # Only the last line of the prefix matters for layout ("tensor(").
    head, newline, opening = prefix.rpartition("\n")
    if indent is None:
        indent = len(opening)

    size_suffix = ["size=" + str(tuple(values.shape))]
    if values.size == 0:
        body = "[]"
        # Like NumPy, the shape is worth showing unless it is just (0,).
        own_suffixes = size_suffix if values.ndim != 1 else []
    else:
        summarize = values.size > _OPTIONS.threshold
        formatter = _ElementFormatter(_shown_values(values, summarize),
                                      is_float=(kind == "float"))
        body = _format_block(values, indent, summarize, formatter)
        # With edgeitems == 0 no element is shown, so the size is.
        own_suffixes = size_suffix if not _OPTIONS.edgeitems else []

    # PyTorch lists the device first, then the size, then everything else.
    n_device = 0
    while n_device < len(suffixes) and suffixes[n_device].startswith("device="):
        n_device += 1
    all_suffixes = list(suffixes[:n_device]) + own_suffixes + list(suffixes[n_device:])

    return head + newline + _add_suffixes(opening + body, all_suffixes, indent)
