"""backends/numba_inline.py: Numba's inliner copies a callee's IR once, and compiles the same code.

The patch only changes how the callee's IR is copied before it is inlined, so
the proof is that nothing else changes: kernels compiled with and without it
give the same LLVM IR and machine code, byte for byte; and that the copies it
makes are what it says (one scope per copy, a fresh copy for each inlining).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from minitorch.backends import numba_inline

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.kernels

# Compiles kernels that inline three op families (uncached: a fresh Numba dispatcher around
# each kernel's Python function) and prints a digest of their LLVM IR and assembly.
_COMPILE = r"""
import copy, hashlib, json, sys
import numba
from numba import types as T
from numba.core import inline_closurecall
from minitorch.backends import numba_inline
from minitorch.backends.cpu import elementwise as E
if sys.argv[1] == "off":                      # Numba's own inliner back (nothing compiled yet)
    inline_closurecall.copy = copy
    worker = inline_closurecall.InlineWorker
    worker.inline_ir = worker.inline_ir.__wrapped__
f32, i64 = T.float32[::1], T.int64[::1]
kernels = {
    "arith_contiguous": (E.arith_contiguous, (T.int64, f32, f32, f32)),
    "unary_int_contiguous": (E.unary_int_contiguous, (T.int64, i64, i64)),
    "unary_fast_strided": (E.unary_fast_strided, (T.int64, f32, T.int64, i64, f32, T.int64, i64,
                                                  i64, T.float64, T.float64, T.int64, T.int64)),
}
out = {"patched": isinstance(inline_closurecall.copy, numba_inline._SharedMemoCopy)}
for name, (kernel, sig) in kernels.items():
    fresh = numba.njit(error_model="numpy")(kernel.py_func)
    fresh.compile(sig)
    for what in ("llvm", "asm"):
        text = getattr(fresh, "inspect_" + what)(sig)
        out[name + "." + what] = hashlib.sha256(text.encode()).hexdigest()
print(json.dumps(out))
"""


def _compiled(patch: str, tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINITORCH_KERNEL_CACHE")}
    env.update(NUMBA_CACHE_DIR=str(tmp_path / patch), MINITORCH_PREBUILT_KERNELS="0",
               PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", _COMPILE, patch], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


def test_kernels_compile_to_the_same_code_with_and_without_it(tmp_path):
    without, with_it = _compiled("off", tmp_path), _compiled("on", tmp_path)
    assert without.pop("patched") is False and with_it.pop("patched") is True
    assert len(with_it) == 6
    assert with_it == without


def _ir_of_a_branchy_function():
    from numba.core.compiler import run_frontend

    def f(x, op):
        if op == 0:
            y = x + 1
        elif op == 1:
            y = x * 2
        elif op == 2:
            y = x - 3
        else:
            y = -x
        return y
    return run_frontend(f)


def test_the_blocks_of_one_inlining_share_one_copied_scope():
    import minitorch.backends.cpu  # noqa: F401  (installs the patch)
    from numba.core import inline_closurecall
    shim = inline_closurecall.copy
    assert isinstance(shim, numba_inline._SharedMemoCopy)
    func_ir = _ir_of_a_branchy_function()
    blocks = list(func_ir.blocks.values())
    assert len(blocks) >= 4 and len({id(b.scope) for b in blocks}) == 1

    def copy_blocks():
        return [shim.deepcopy(b) for b in blocks]   # as Numba's copy_ir calls it
    shim.memos = {}
    try:
        first = copy_blocks()
        again = copy_blocks()
        shim.memos = {}                 # the next inline_ir call
        second = copy_blocks()
    finally:
        shim.memos = None
    scopes = {id(b.scope) for b in first}
    assert len(scopes) == 1 and id(blocks[0].scope) not in scopes
    assert [id(b) for b in again] == [id(b) for b in first]     # one memo within a call
    assert not {id(b) for b in second} & {id(b) for b in first}  # a fresh copy in the next
    assert [str(b) for b in second] == [str(b) for b in blocks]
    # Outside an inlining, it is copy.deepcopy: every call copies anew.
    a, b = shim.deepcopy(blocks[0]), shim.deepcopy(blocks[0])
    assert a is not b and a.scope is not b.scope


def test_installing_twice_patches_once():
    from numba.core import inline_closurecall
    numba_inline.install()
    wrapped = inline_closurecall.InlineWorker.inline_ir
    numba_inline.install()
    assert inline_closurecall.InlineWorker.inline_ir is wrapped
    assert wrapped.__wrapped__.__module__ == "numba.core.inline_closurecall"
