"""minitorch.compile: tracing, replay, fused elementwise kernels, guards and fallbacks.

The oracle is eager minitorch itself: a compiled function must give the same
values, dtypes, shapes, ``requires_grad`` and gradients as the function run
as written (and, where PyTorch is installed, ``torch.compile``'s API shape:
``OptimizedModule``, ``_orig_mod``, state-dict keys).
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitorch
from minitorch import nn
from minitorch.autograd.gradcheck import gradcheck
from minitorch.backends import fusion_program, scalar_ops
from minitorch.compiler import derivative_source, fusion
from minitorch.ops import elementwise

pytestmark = pytest.mark.autograd


def _close(a, b, tol=1e-6):
    np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().cpu().numpy(), rtol=tol, atol=tol)


def _grads(fn, *inputs):
    for t in inputs:
        t.grad = None
    out = fn(*inputs)
    (out if not isinstance(out, tuple) else out[0]).sum().backward()
    return out, [t.grad.clone() if t.grad is not None else None for t in inputs]


# ---------------------------------------------------------------------------
# Fusion: values and gradients equal eager
# ---------------------------------------------------------------------------
def _chain(x, w, b):
    y = x * w + b
    return minitorch.tanh(y) * 2 - y.exp() / 3


def test_a_chain_of_elementwise_ops_becomes_one_fused_op_with_eager_values_and_grads(default_device):
    minitorch.manual_seed(0)
    x = minitorch.randn(16, 10, requires_grad=True)
    w = minitorch.randn(10, requires_grad=True)          # broadcast along the rows
    b = minitorch.randn(())                              # a 0-d tensor: one value
    compiled = minitorch.compile(_chain)
    first, g_first = _grads(compiled, x, w, b)           # traces (runs eagerly)
    again, g_again = _grads(compiled, x, w, b)           # replays the fused program
    expected, g_expected = _grads(_chain, x, w, b)
    assert "1 ops (FusedElementwise)" in minitorch.compiler.explain(compiled)
    for out in (first, again):
        _close(out, expected)
        assert out.shape == expected.shape and out.dtype == expected.dtype
        assert out.requires_grad and out.grad_fn is not None
    _close(g_again[0], g_expected[0])
    _close(g_again[1], g_expected[1], 1e-5)              # summed over the 16 rows
    assert g_again[2] is None
    assert type(again.grad_fn).__name__ == "CompiledFunctionBackward"


def test_fusion_runs_on_every_device_with_its_own_generated_kernel(device):
    minitorch.manual_seed(1)
    x = minitorch.randn(6, 5, device=device, requires_grad=True)
    w = minitorch.randn(5, device=device, requires_grad=True)
    b = minitorch.randn((), device=device)
    compiled = minitorch.compile(_chain)
    compiled(x, w, b)
    out, grads = _grads(compiled, x, w, b)
    expected, expected_grads = _grads(_chain, x, w, b)
    assert "1 fused program" in minitorch.compiler.explain(compiled)
    assert out.device == expected.device
    _close(out.cpu(), expected.cpu())
    for g, e in zip(grads[:2], expected_grads[:2]):
        _close(g.cpu(), e.cpu(), 1e-5)
    source = minitorch.compiler.generated_source(compiled, device=device)
    assert ("cuda.grid(1)" in source) == (device == "cuda")


def test_fused_gradients_pass_a_float64_finite_difference_check(default_device):
    x = minitorch.rand(5, 3, dtype=minitorch.float64, requires_grad=True)
    w = minitorch.rand(3, dtype=minitorch.float64, requires_grad=True)
    b = minitorch.rand(5, 1, dtype=minitorch.float64, requires_grad=True)
    compiled = minitorch.compile(_chain)
    compiled(x, w, b)
    assert gradcheck(compiled, (x, w, b))
    assert fusion.programs(next(iter(compiled._minitorch_compiled.graphs.values())))


# Every unary op the fuser can differentiate (its eager derivative reads as source), with
# arguments in its domain: (Function class, p0, p1, a, b): the op is applied to a * x + b
# for x in (0.1, 0.9).
def _unary_cases():
    params = {scalar_ops.LEAKY_RELU: (0.1, 0.0), scalar_ops.ELU: (1.0, 0.0),
              scalar_ops.CLAMP: (-0.2, 0.3), scalar_ops.POW_SCALAR: (3.0, 0.0),
              scalar_ops.SOFTPLUS: (2.0, 1.0)}
    shifted = {scalar_ops.RELU, scalar_ops.LEAKY_RELU, scalar_ops.ELU, scalar_ops.CLAMP,
               scalar_ops.ABS, scalar_ops.SILU, scalar_ops.POW_SCALAR, scalar_ops.SQUARE,
               scalar_ops.NEG, scalar_ops.TANH, scalar_ops.SIGMOID, scalar_ops.SIN,
               scalar_ops.COS, scalar_ops.EXP, scalar_ops.EXPM1, scalar_ops.EXP2,
               scalar_ops.TAN, scalar_ops.SOFTPLUS, scalar_ops.GELU, scalar_ops.GELU_TANH,
               scalar_ops.MISH, scalar_ops.LOG_SIGMOID, scalar_ops.SINH, scalar_ops.COSH,
               scalar_ops.ASINH, scalar_ops.ATAN, scalar_ops.ERF, scalar_ops.ERFC}
    cases = []
    for cls in derivative_source.fusable_unary_ops():
        p0, p1 = params.get(cls.op, (0.0, 0.0))
        a, b = (2.0, -1.0) if cls.op in shifted else (1.0, 0.05)
        if cls.op == scalar_ops.ACOSH:
            a, b = 1.0, 1.5                  # acosh is defined from 1 on
        cases.append((cls, p0, p1, a, b))
    return cases


def test_every_fusable_unary_op_matches_its_eager_value_and_derivative(default_device):
    cases = _unary_cases()
    # The ops whose derivative the fuser reads: the activations and the math functions
    # (only the zero-derivative roundings, whose backward builds a tensor, are left out).
    fused = {cls.__name__ for cls, *_ in cases}
    assert {"Exp", "Tanh", "Relu", "Clamp", "Gelu", "Mish", "PowTensorScalar"} <= fused
    assert not fused & {"Floor", "Ceil", "Round", "Trunc", "Sign"}

    def f(x):
        total = x * 0.0
        for i, (cls, p0, p1, a, b) in enumerate(cases):
            total = total + cls.apply(x * a + b, p0, p1) * (1.0 + 0.1 * i)
        return total

    # float32: the eager float32 kernels are the ones the rest of the suite compiles
    # anyway (a wrong derivative is off by far more than float32's rounding).
    x = minitorch.linspace(0.1, 0.9, 41).requires_grad_()
    compiled = minitorch.compile(f)
    compiled(x)
    graph = next(iter(compiled._minitorch_compiled.graphs.values()))
    assert len(graph.calls) == 1 and graph.calls[0].fn is fusion.FusedElementwise
    out, (g,) = _grads(compiled, x)
    expected, (g_expected,) = _grads(f, x)
    _close(out, expected, 1e-5)
    _close(g, g_expected, 1e-4)


_BINARY = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b,
           lambda a, b: a / (b * b + 1.0), lambda a, b: minitorch.add(a, b, alpha=0.5),
           lambda a, b: minitorch.sub(a, b, alpha=2), lambda a, b: 2.0 - a,
           lambda a, b: 3 / (a * a + 1), lambda a, b: 1.5 * a]
_UNARY = [minitorch.tanh, minitorch.sigmoid, minitorch.relu, minitorch.sin,
          lambda t: t.clamp(-0.5, 0.5), lambda t: t * t, lambda t: minitorch.exp(t * 0.1),
          lambda t: -t, lambda t: t.abs(), lambda t: nn.functional.leaky_relu(t, 0.2)]


@settings(max_examples=6, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 9), st.integers(0, 2)),
                min_size=2, max_size=8))
def test_random_elementwise_programs_agree_with_eager(default_device, steps):
    """Random chains over three inputs (one broadcast), float64: values and all gradients."""
    rng = np.random.default_rng(len(steps))
    x = minitorch.tensor(rng.normal(size=(4, 3)), requires_grad=True)
    y = minitorch.tensor(rng.normal(size=(4, 3)), requires_grad=True)
    z = minitorch.tensor(rng.normal(size=(3,)), requires_grad=True)

    def f(x, y, z):
        values = [x, y, z]
        for binary, k, j in steps:
            v = values[-1]
            values.append(_BINARY[k % len(_BINARY)](v, values[j]) if binary
                          else _UNARY[k](v))
        return values[-1] + x

    compiled = minitorch.compile(f)
    compiled(x, y, z)
    out, grads = _grads(compiled, x, y, z)
    expected, expected_grads = _grads(f, x, y, z)
    _close(out, expected, 1e-12)
    for g, e in zip(grads, expected_grads):
        assert (g is None) == (e is None)
        if g is not None:
            _close(g, e, 1e-10)


def test_values_used_after_the_run_are_outputs_of_the_fused_op(default_device):
    def f(x):
        y = x * 2 + 1            # fused with the next op, and used later
        z = y.tanh()
        return z.sum() + y.mean()

    x = minitorch.randn(8, requires_grad=True)
    compiled = minitorch.compile(f)
    compiled(x)
    out, (g,) = _grads(compiled, x)
    expected, (g_expected,) = _grads(f, x)
    _close(out, expected)
    _close(g, g_expected)
    graph = next(iter(compiled._minitorch_compiled.graphs.values()))
    assert [len(fusion.programs(graph)[0].outputs)] == [2]


def test_non_contiguous_or_mixed_dtype_operands_are_not_fused_and_stay_correct(default_device):
    def f(x, h):
        return (x.t() * 2).exp() + h.float().sum()

    x = minitorch.randn(3, 4)
    h = minitorch.ones(2, dtype=minitorch.float64)
    compiled = minitorch.compile(f)
    compiled(x, h)
    out = compiled(x, h)
    _close(out, f(x, h))
    assert out.stride() == f(x, h).stride()


def test_a_fused_kernel_is_a_file_on_disk_and_a_second_process_loads_it(default_device, tmp_path):
    """The generated source is cached like every kernel: the second process compiles nothing."""
    script = (
        "import minitorch, numba\n"
        "from numba.core.event import install_recorder\n"
        "f = minitorch.compile(lambda x: (x * 1.23456 + 0.5).tanh())\n"
        "x = minitorch.randn(10, requires_grad=True)\n"
        "f(x)\n"
        "with install_recorder('numba:compile') as rec:\n"
        "    f(x).sum().backward()\n"
        "print(len([e for e in rec.buffer if e[1].is_start]))\n")
    env = {**os.environ, "MINITORCH_COMPILE_DIR": str(tmp_path), "NUMBA_NUM_THREADS": "1"}
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, timeout=600) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    texts = sorted(f.read_text() for f in tmp_path.glob("fused_*.py"))
    assert len(texts) == 2                 # the forward kernel's file, the backward's
    assert "def backward(" in texts[0] and "def forward(" in texts[1]
    assert int(runs[0].stdout.split()[-1]) > 0       # compiled the fused kernels
    assert int(runs[1].stdout.split()[-1]) == 0      # loaded them from the disk cache


def test_generated_source_shows_the_kernel_a_student_can_read(default_device):
    compiled = minitorch.compile(lambda x, y: (x * y).exp() + 1)
    with pytest.raises(ValueError, match="call the compiled function first"):
        minitorch.compiler.generated_source(compiled)
    compiled(minitorch.randn(5), minitorch.randn(5))
    source = minitorch.compiler.generated_source(compiled)
    assert "def forward(in0, in1, out0, start, stop):" in source
    assert "return math.exp(x)" in source                 # exp's branch of scalar_ops.unary
    assert "def backward(" in source
    compile(source, "generated", "exec")                  # valid Python


# ---------------------------------------------------------------------------
# Modules, guards, and what PyTorch's API gives
# ---------------------------------------------------------------------------
def _mlp():
    minitorch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(12, 8), nn.Tanh(), nn.Linear(8, 3))


def test_compiled_module_trains_exactly_as_the_eager_one(default_device):
    x = minitorch.randn(6, 3, 4)
    y = minitorch.tensor([0, 1, 2, 0, 1, 2])
    losses = []
    for compiled in (False, True):
        model = _mlp()
        run = minitorch.compile(model) if compiled else model
        opt = minitorch.optim.Adam(model.parameters(), lr=0.01)
        trace = []
        for _ in range(4):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(run(x), y)
            loss.backward()
            opt.step()
            trace.append(loss.item())
        losses.append(trace)
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-6)


def test_optimized_module_has_pytorchs_shape(default_device):
    model = _mlp()
    compiled = minitorch.compile(model)
    assert isinstance(compiled, minitorch.compiler.OptimizedModule)
    assert isinstance(compiled, nn.Module)
    assert compiled._orig_mod is model
    assert [id(p) for p in compiled.parameters()] == [id(p) for p in model.parameters()]
    # PyTorch's keys (torch.compile(Sequential(Flatten(), Linear...)).state_dict()); not
    # checked against torch itself here: importing torch._dynamo takes ten seconds.
    assert list(compiled.state_dict()) == ["_orig_mod.1.weight", "_orig_mod.1.bias",
                                           "_orig_mod.3.weight", "_orig_mod.3.bias"]


def test_guards_trace_again_for_new_shapes_modes_and_flags(default_device):
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.ReLU())
    compiled = minitorch.compile(model)
    traces = compiled._compiled.graphs
    x = minitorch.randn(2, 4)
    compiled(x)
    compiled(x)
    assert len(traces) == 1
    compiled(minitorch.randn(3, 4))                    # a new shape
    assert len(traces) == 2
    model.eval()                                       # dropout becomes the identity
    out = compiled(x)
    assert len(traces) == 3
    _close(out, model(x))
    with minitorch.no_grad():                          # no graph recorded: a new trace
        assert not compiled(x).requires_grad
    assert len(traces) == 4
    model[0].weight.requires_grad_(False)              # a constant's flag changed
    out = compiled(x)
    assert not out.requires_grad or model[0].bias.requires_grad
    _close(out, model(x))


def test_dropout_draws_new_numbers_on_every_replay(default_device):
    model = nn.Sequential(nn.Linear(4, 64), nn.Dropout(0.5))
    compiled = minitorch.compile(model)
    x = minitorch.randn(2, 4)
    compiled(x)
    minitorch.manual_seed(3)
    a = compiled(x)
    b = compiled(x)
    minitorch.manual_seed(3)
    expected = model(x)
    _close(a, expected)                                # same seed: the eager numbers
    assert not np.allclose(a.detach().cpu().numpy(), b.detach().cpu().numpy())


def test_factories_inside_the_function_run_again_on_replay(default_device):
    def f(x):
        h = minitorch.zeros(x.shape[0], 3)
        noise = minitorch.randn_like(x)
        return (x + noise).sum(1, keepdim=True) + h

    compiled = minitorch.compile(f)
    x = minitorch.randn(4, 5)
    compiled(x)
    minitorch.manual_seed(11)
    a = compiled(x)
    minitorch.manual_seed(11)
    _close(a, f(x))
    assert "runs eagerly" not in minitorch.compiler.explain(compiled)


@pytest.mark.parametrize("body, reason", [
    (lambda x: x * 2 if x.sum().item() > 0 else x * 3, "read the values"),
    (lambda x: x.clone().data * 2, "computed outside the recorded ops"),
    (lambda x: x.clone().add_(1) * 2, None),            # in-place ops are recorded
    (lambda x: (x * 2).detach() + 1, None),
])
def test_what_cannot_be_traced_runs_eagerly_and_fullgraph_says_why(default_device, body, reason):
    x = minitorch.randn(5)
    compiled = minitorch.compile(body)
    _close(compiled(x), body(x))
    _close(compiled(x), body(x))
    if reason is None:
        return
    assert reason in minitorch.compiler.explain(compiled)
    strict = minitorch.compile(body, fullgraph=True)
    with pytest.raises(minitorch.compiler.Unsupported, match=reason):
        strict(x)
    assert issubclass(minitorch.compiler.Unsupported, RuntimeError)


def test_backward_inside_the_function_and_hooks_run_eagerly(default_device):
    w = minitorch.randn(3, requires_grad=True)

    def step(x):
        loss = (x * w).sum()
        loss.backward()
        return loss

    compiled = minitorch.compile(step)
    compiled(minitorch.randn(3))
    assert "backward() ran inside" in minitorch.compiler.explain(compiled)
    model = nn.Linear(3, 3)
    seen = []
    model.register_forward_hook(lambda m, i, o: seen.append(o))
    compiled = minitorch.compile(model)
    for _ in range(3):
        compiled(minitorch.randn(2, 3))
    assert len(seen) == 3                              # the hook ran on every call
    assert "has hooks" in minitorch.compiler.explain(compiled)


def test_a_changed_argument_value_or_parameter_is_seen(default_device):
    def f(x, k):
        return x * k + 1

    compiled = minitorch.compile(f)
    x = minitorch.randn(4)
    _close(compiled(x, 2.0), f(x, 2.0))
    _close(compiled(x, 3.0), f(x, 3.0))                # a different constant: traced again
    model = nn.Linear(2, 2)
    cm = minitorch.compile(model)
    xs = minitorch.randn(1, 2)
    cm(xs)
    with minitorch.no_grad():
        model.weight.mul_(2)                           # in place: the trace holds the tensor
    _close(cm(xs), model(xs))
    model.weight = nn.Parameter(minitorch.randn(2, 2))  # a new object: the guard notices
    _close(cm(xs), model(xs))


def test_cache_size_limit_stops_tracing_with_a_warning(default_device, monkeypatch):
    monkeypatch.setattr(minitorch.compiler, "cache_size_limit", 2)
    compiled = minitorch.compile(lambda x: x * 2 + 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 5):
            _close(compiled(minitorch.ones(n)), minitorch.ones(n) * 3)
    assert len(compiled._minitorch_compiled.graphs) == 2
    assert sum("cache_size_limit" in str(w.message) for w in caught) == 1


def test_compile_api_arguments_are_checked_as_pytorch_does(default_device):
    f = lambda x: x + 1  # noqa: E731
    with pytest.raises(RuntimeError, match="Either mode or options"):
        minitorch.compile(f, mode="default", options={})
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        minitorch.compile(f, mode="fast")
    with pytest.raises(RuntimeError, match="invalid backend"):
        minitorch.compile(f, backend="tvm")
    with pytest.raises(NotImplementedError, match="custom backends"):
        minitorch.compile(f, backend=lambda gm, inputs: gm)
    assert minitorch.compile(f, disable=True) is f

    @minitorch.compile(backend="eager")
    def g(x):
        assert minitorch.compiler.is_compiling()
        return x.exp() * 2

    x = minitorch.randn(3)
    _close(g(x), x.exp() * 2)
    assert not minitorch.compiler.is_compiling()
    minitorch.compiler.reset()
    assert "nothing traced" in minitorch.compiler.explain(g)
    _close(g(x), x.exp() * 2)
    assert "0 fused program" in minitorch.compiler.explain(g)   # backend="eager": no fusion


def test_op_source_copies_one_branch_of_the_scalar_ops_switch(default_device):
    assert fusion_program.op_source("unary", scalar_ops.EXP) == "    return math.exp(x)"
    assert fusion_program.op_source("arith", scalar_ops.MUL) == "    return x * y"
    clamp = fusion_program.op_source("unary", scalar_ops.HARDTANH)
    assert clamp == fusion_program.op_source("unary", scalar_ops.CLAMP) and "p0" in clamp
    for cls in derivative_source.fusable_unary_ops():
        compile("def f(x, p0, p1):\n" + fusion_program.op_source("unary", cls.op), "op", "exec")


def test_in_place_updates_replay_batchnorm_statistics_included(default_device):
    def make():
        minitorch.manual_seed(0)
        return nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU(inplace=True),
                             nn.Flatten(), nn.Linear(64, 3))

    eager, model = make(), make()
    compiled = minitorch.compile(model)
    x = minitorch.randn(4, 2, 6, 6)
    for _ in range(3):
        a, b = eager(x), compiled(x)
        a.sum().backward()
        b.sum().backward()
    assert "runs eagerly" not in minitorch.compiler.explain(compiled)
    _close(b, a, 1e-5)
    for p, q in zip(eager.parameters(), model.parameters()):
        _close(q.grad, p.grad, 1e-4)
    for (name, u), (_, v) in zip(eager.named_buffers(), model.named_buffers()):
        _close(v.double(), u.double(), 1e-6)          # running statistics, batch count
    assert model[1].num_batches_tracked.item() == 3


def test_an_untraceable_call_still_runs_once(default_device):
    calls = []

    def f(x, stats):
        calls.append(1)
        stats.add_(x.sum())                  # an in-place update: must happen once per call
        return x * 2 if x.sum().item() > -1e9 else x

    compiled = minitorch.compile(f)
    stats = minitorch.zeros(())
    compiled(minitorch.ones(3), stats)
    compiled(minitorch.ones(3), stats)
    assert len(calls) == 2 and stats.item() == 6.0
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5, inplace=True))
    cm = minitorch.compile(model)
    minitorch.manual_seed(5)
    out = cm(minitorch.ones(2, 4))
    assert "captures a tensor" in minitorch.compiler.explain(cm)
    minitorch.manual_seed(5)
    _close(out, model(minitorch.ones(2, 4)))


def test_structured_inputs_and_outputs_and_the_flags_of_the_results(default_device):
    def f(pair, scale, *, bias):
        a, b = pair
        return {"sum": a * scale + b, "parts": (a.exp(), b.long())}, bias + 1

    compiled = minitorch.compile(f)
    a = minitorch.randn(3, requires_grad=True)
    b = minitorch.randn(3)
    for _ in range(2):
        out, bumped = compiled((a, b), 2.0, bias=5)
    expected, _ = f((a, b), 2.0, bias=5)
    assert bumped == 6 and set(out) == {"sum", "parts"}
    _close(out["sum"], expected["sum"])
    assert out["parts"][1].dtype == minitorch.int64 and not out["parts"][1].requires_grad
    assert out["sum"].requires_grad and out["parts"][0].requires_grad
    with minitorch.no_grad():
        plain, _ = compiled((a, b), 2.0, bias=5)
    assert not plain["sum"].requires_grad and plain["sum"].grad_fn is None


def test_a_transposed_input_is_a_new_kind_of_input(default_device):
    compiled = minitorch.compile(lambda x: (x * 2).exp() + 1)
    x = minitorch.randn(4, 3)
    compiled(x)
    out = compiled(x.t().contiguous().t())            # same shape, other strides
    assert len(compiled._minitorch_compiled.graphs) == 2
    _close(out, (x * 2).exp() + 1)
    assert out.stride() == ((x.t().contiguous().t() * 2).exp() + 1).stride()


def test_an_rnn_with_its_hidden_state_compiles(default_device):
    minitorch.manual_seed(2)
    rnn = nn.GRU(4, 5, batch_first=True)
    compiled = minitorch.compile(rnn)
    x, h = minitorch.randn(2, 3, 4), minitorch.zeros(1, 2, 5)
    for _ in range(2):
        out, h_n = compiled(x, h)
    expected, h_expected = rnn(x, h)
    assert "runs eagerly" not in minitorch.compiler.explain(compiled)
    _close(out, expected)
    _close(h_n, h_expected)


def test_flags_and_tensor_hooks_set_inside_the_function_are_set_on_every_replay(default_device):
    seen = []

    def f(x):
        h = minitorch.zeros(3).requires_grad_()
        y = (x + h) * 2
        y.register_hook(lambda g: seen.append(g.sum().item()))
        y.retain_grad()
        return y, h

    compiled = minitorch.compile(f)
    x = minitorch.ones(3)
    for call in range(3):
        y, h = compiled(x)
        assert h.requires_grad and h.is_leaf and y.requires_grad
        y.sum().backward()
        assert h.grad.tolist() == [2.0, 2.0, 2.0] and y.grad.tolist() == [1.0, 1.0, 1.0]
    assert seen == [3.0, 3.0, 3.0]
    assert "runs eagerly" not in minitorch.compiler.explain(compiled)


def test_an_error_while_tracing_is_the_eager_error_and_leaves_no_recorder_behind(default_device):
    compiled = minitorch.compile(lambda x: x.view(7) * 2)
    with pytest.raises(RuntimeError, match="invalid for input of size"):
        compiled(minitorch.ones(6))
    assert not minitorch.compiler.is_compiling()
    _close(compiled(minitorch.ones(7)), minitorch.ones(7) * 2)
    _close(compiled(minitorch.ones(7)), minitorch.ones(7) * 2)


def test_relu_then_max_pool_is_rewritten_as_max_pool_then_relu_with_equal_gradients(default_device):
    def make():
        minitorch.manual_seed(4)
        return nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(48, 2))

    eager, model = make(), make()
    compiled = minitorch.compile(model)
    x = minitorch.randn(5, 1, 8, 8)
    x[0] = -1.0                                   # windows of negative numbers only
    compiled(x)
    out = compiled(x)
    names = [c.fn.__name__ for c in next(iter(compiled._compiled.graphs.values())).calls]
    assert names.index("MaxPool2d") < names.index("Relu")
    expected = eager(x)
    _close(out, expected)
    out.sum().backward()
    expected.sum().backward()
    for p, q in zip(eager.parameters(), model.parameters()):
        _close(q.grad, p.grad, 1e-5)
    unchanged = minitorch.compile(lambda t: nn.functional.max_pool2d(
        nn.functional.relu(t), 2, return_indices=True))
    unchanged(x)                                  # the indices are read: no rewrite
    calls = next(iter(unchanged._minitorch_compiled.graphs.values())).calls
    assert [c.fn.__name__ for c in calls][:2] == ["Relu", "MaxPool2d"]


@pytest.mark.cpu_only("reads derivative formulas as text: no tensor, no device")
def test_a_derivative_is_read_from_the_eager_backward_or_the_op_does_not_fuse():
    # The fused kernels' derivatives are the eager formulas, read on symbols: ...
    assert derivative_source.unary_derivative(elementwise.Exp, 0.0, 0.0) == "g * y"
    assert derivative_source.unary_derivative(elementwise.Clamp, -1.0, 2.0) == \
        "g if x >= -1.0 and x <= 2.0 else 0.0"
    # (Mul's and Div's are course tasks 3.4 and 3.7: their text is not shown here; the
    # fused-against-eager tests check them by value.)
    assert derivative_source.arith_derivatives(elementwise.Sub) == ("g", "-g")
    assert derivative_source.arith_derivatives(elementwise.Add) == ("g", "g")
    assert all(derivative_source.arith_derivatives(cls) for cls in (elementwise.Mul,
                                                                    elementwise.Div))
    # ... and parentheses only where Python needs them.
    x, y = derivative_source.Symbol("x"), derivative_source.Symbol("y")
    assert (x - (y - x)).text == "x - (y - x)" and ((x - y) - x).text == "x - y - x"
    assert (-(x * y) / (x + 1)).text == "-(x * y) / (x + 1.0)"
    assert (x * -0.5).text == "x * -0.5" and (x + float("inf")).text == "x + np.inf"
    # A formula a symbol cannot stand in for gives None: the op runs eagerly.
    assert derivative_source.unary_derivative(elementwise.Floor, 0.0, 0.0) is None  # new_zeros
    branching = type("Branching", (elementwise._Unary,), {
        "op": scalar_ops.EXP, "grad_formula": staticmethod(lambda x, y, g, *p: g if y else -g)})
    assert derivative_source.unary_derivative(branching, 0.0, 0.0) is None
    assert branching not in derivative_source.fusable_unary_ops()

    # A course edition's backward still a stub: Mul does not fuse, and the eager backward
    # raises the stub's error where the student expects it (not a fused right answer).
    def stub(ctx, g):
        raise NotImplementedError("Task 3.4: ...")
    stubbed = type("StubMul", (elementwise.Mul,), {"backward": staticmethod(stub)})
    assert derivative_source.arith_derivatives(stubbed) is None


def test_the_fused_backward_uses_the_eager_formula_of_a_changed_op(monkeypatch, default_device):
    # One formula per op: change Sigmoid's eager derivative, and the fused backward follows.
    monkeypatch.setattr(elementwise.Sigmoid, "grad_formula",
                        staticmethod(lambda x, y, g, *p: g * 3.0))
    derivative_source.unary_derivative.cache_clear()
    try:
        x = minitorch.linspace(-1.0, 1.0, 9, dtype=minitorch.float64).requires_grad_()
        compiled = minitorch.compile(lambda t: minitorch.sigmoid(t * 2.0) * 1.5)
        compiled(x).sum().backward()
        np.testing.assert_allclose(x.grad.cpu().numpy(), np.full(9, 2.0 * 3.0 * 1.5))
        assert "runs eagerly" not in minitorch.compiler.explain(compiled)
    finally:
        derivative_source.unary_derivative.cache_clear()
