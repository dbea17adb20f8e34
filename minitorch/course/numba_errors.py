"""Numba's compile errors, cut down to what a student needs to read.

When a kernel does not type (a float stored into an int array, an unknown
attribute, a function called with the wrong arguments), Numba raises a
``TypingError`` whose message repeats the kernel's source line for every
compiler pass it went through and, for a bad call, lists every overload it
tried; pytest adds the compiler's own frames.  A student needs three things:
what Numba could not do, the line of their kernel, and what it was typing
there.  :func:`trim_numba_error` keeps those (docs/course/numba-errors.md
shows the three errors students meet first, before and after).
"""

from __future__ import annotations

__all__ = ["trim_numba_error"]

#: At most this many lines of a trimmed message.
MAX_LINES = 24


def _is_numba_error(exc: BaseException) -> bool:
    return any(cls.__module__.startswith("numba") and cls.__name__.endswith("Error")
               for cls in type(exc).__mro__)


def trim_numba_error(exc: BaseException) -> str | None:
    """The short form of a Numba compile error, or None for any other exception.

    Keeps the first explanation line (``Unknown attribute 'foo' of type
    float64``), the first source block (``File "x.py", line 6:`` with the
    line and its caret) and the ``During: typing of ...`` lines; drops the
    pipeline banner, repeated blocks, the list of overloads tried and the
    compiler's frames.
    """
    if not _is_numba_error(exc):
        return None
    lines = str(exc).splitlines()
    kept: list = []
    seen_block = False
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("Failed in ") and "pipeline" in stripped:
            i += 1
            continue
        if stripped.startswith("File \"") and ", line " in stripped:
            # A source block: the File line, then indented source up to the caret line.
            block = [line]
            i += 1
            while i < len(lines) and lines[i].strip() and not lines[i].startswith("During:"):
                block.append(lines[i])
                i += 1
            if not seen_block:
                kept += [ln for ln in block if "<source elided>" not in ln]
                seen_block = True
            continue
        if stripped.startswith("During: Pass") or not stripped:
            i += 1
            continue
        if stripped.startswith("During:"):
            if line not in kept:
                kept.append(line)
            i += 1
            continue
        if stripped.startswith(("- Of which", "- Resolution failure", "Overload", "Current ",
                                "With argument", "Rejected as", "The following error",
                                "No match", "Known signatures", "* (", "Type Restricted")) \
                or (line.startswith((" ", "\t", "-")) and ">>>" not in line):
            i += 1                      # the overloads Numba tried: noise to a student
            continue
        if line not in kept:
            kept.append(line)
        i += 1
    if not kept:
        return None
    head = f"{type(exc).__name__}: {kept[0].strip()}"
    body = kept[1:MAX_LINES]
    if len(kept) > MAX_LINES:
        body.append(f"... ({len(kept) - MAX_LINES} more lines)")
    return "\n".join([head] + ["  " + ln for ln in body])
