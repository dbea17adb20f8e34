"""Both backends keep the contract of ``backends/interface.py``, and the check finds a broken one.

Cost: well under a second (imports and ``inspect.signature``; no kernel is compiled
or run).  The CUDA backend module imports under the simulator (conftest sets it).
"""

from __future__ import annotations

import ast
import pathlib
import types
from typing import get_args

import pytest

from minitorch.backends import index_maps, interface, optimizer_rules, reduce_ops
from minitorch.backends.cpu import backend as cpu_backend

ROOT = pathlib.Path(__file__).resolve().parents[1] / "minitorch"


@pytest.fixture(scope="module")
def cuda_backend():
    from minitorch.backends.cuda import backend  # imports numba.cuda (the simulator)
    return backend


@pytest.fixture(scope="module")
def backends(cuda_backend):
    return {"cpu": cpu_backend, "cuda": cuda_backend}


def test_both_backends_keep_the_contract(backends):
    for name, backend in backends.items():
        assert interface.problems(backend) == [], name


def test_every_protocol_member_is_checked():
    # The check reads the protocol itself: a member added there is required at once.
    declared = interface._declared(interface.Backend)
    assert {"unary", "binary", "reduce", "fused_update", "random_fill"} <= declared.keys()
    assert {"CAPABILITIES", "REDUCE_OPS", "SCATTER_OPS"} <= declared.keys()
    assert len(declared) >= 40


def _fake(**changes) -> types.ModuleType:
    """A copy of the CPU backend's namespace with ``changes`` (None deletes a name)."""
    fake = types.ModuleType("fake_backend")
    fake.__dict__.update({k: v for k, v in vars(cpu_backend).items() if not k.startswith("__")})
    for key, value in changes.items():
        if value is None:
            delattr(fake, key)
        else:
            setattr(fake, key, value)
    return fake


def test_the_fake_copy_itself_passes():
    assert interface.problems(_fake()) == []


@pytest.mark.parametrize("changes, says", [
    ({"gather": None}, "'gather' is missing"),
    ({"REDUCE_OPS": None}, "'REDUCE_OPS' is missing"),
    # a parameter renamed, two swapped, one dropped, a default lost, one added
    ({"copy": lambda source, dst: None}, "copy(source, dst)"),
    ({"where": lambda a, cond, b, out: None}, "where(a, cond, b, out)"),
    ({"fill": lambda dst: None}, "fill(dst)"),
    ({"unary": lambda op, a, out, p0, p1, family: None}, "does not match"),
    ({"matmul": lambda a, b, out, extra=0: None}, "matmul(a, b, out, extra=...)"),
    ({"allocate": 3}, "declared a function, found int"),
    # capabilities: a member there undeclared, a declared one missing, an unknown one
    ({"CAPABILITIES": cpu_backend.CAPABILITIES - {interface.THRESHOLD_BACKWARD}},
     "has 'threshold_backward' but does not declare"),
    ({"conv2d_direct_backward": None}, "declares 'conv2d_direct' but has no "
                                       "'conv2d_direct_backward'"),
    ({"CAPABILITIES": cpu_backend.CAPABILITIES | {"teleport"}}, "unknown capability 'teleport'"),
    ({"CAPABILITIES": set(cpu_backend.CAPABILITIES)}, "must be a frozenset"),
])
def test_a_broken_backend_is_rejected(changes, says):
    found = interface.problems(_fake(**changes))
    assert found, changes
    assert any(says in line for line in found), found


def test_named_constants_are_the_kernel_tables_keys(backends):
    assert get_args(interface.UnaryFamily) == interface.UNARY_FAMILIES
    assert get_args(interface.BinaryFamily) == interface.BINARY_FAMILIES
    assert get_args(interface.RandomKind) == interface.RANDOM_KINDS
    assert set(get_args(interface.ReduceOp)) == set(reduce_ops.CODES)
    assert set(get_args(interface.ScatterOp)) == set(index_maps.SCATTER_CODES)
    for name, backend in backends.items():
        assert set(backend._UNARY) == set(interface.UNARY_FAMILIES), name
        assert set(backend._BINARY) == set(interface.BINARY_FAMILIES), name
        assert backend.REDUCE_OPS is reduce_ops.CODES, name
        assert backend.SCATTER_OPS is index_maps.SCATTER_CODES, name


def test_every_optimizer_step_has_a_kernel_in_each_backend(backends):
    records = set(optimizer_rules.KERNELS)
    for name, backend in backends.items():
        assert set(backend._UPDATE) == records, name


def test_an_unknown_random_kind_is_refused():
    import numpy as np
    with pytest.raises(ValueError, match="unknown random fill 'gaussian'"):
        cpu_backend.random_fill("gaussian", np.empty(2), np.uint64(0), np.uint64(0))


def _capability_probes(source: str) -> list[str]:
    """``hasattr(x, "name")`` / ``getattr(x, "name", ...)`` calls naming a capability member."""
    members = {m for ms in interface.CAPABILITY_MEMBERS.values() for m in ms}
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("hasattr", "getattr") and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant) and node.args[1].value in members):
            found.append(f"{node.func.id}(..., {node.args[1].value!r}) line {node.lineno}")
    return found


def test_optional_kernels_are_asked_by_capability_not_hasattr():
    assert _capability_probes('if hasattr(backend, "conv2d_direct"): pass')   # the check bites
    assert not _capability_probes('if hasattr(module, "dim"): pass')
    offenders = {}
    for path in (ROOT / "ops").rglob("*.py"):
        found = _capability_probes(path.read_text())
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    for path in (ROOT / "tensor_base.py", ROOT / "backends" / "__init__.py"):
        found = _capability_probes(path.read_text())
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    assert offenders == {}
