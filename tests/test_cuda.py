"""What only the CUDA backend has: devices, moves, memory, the runtime, the simulator.

The ops themselves are tested on both devices where they are tested on the
CPU: those tests take the ``device`` fixture of ``tests/conftest.py``
(``cpu``, and ``cuda``).  Here are the tests that only make sense with a
CUDA device: moving tensors and modules between devices, errors across
devices, ``minitorch.cuda``'s queries and memory counters, the same random
numbers and the same training steps on both devices, DataParallel over
``cuda`` devices, the simulator's quirks, and the command line on ``cuda``.

Without a GPU the CUDA kernels run on Numba's CUDA simulator:
``tests/conftest.py`` sets ``NUMBA_ENABLE_CUDASIM=1`` before ``numba.cuda``
is first imported.  The simulator runs every GPU thread as a Python thread,
so every shape here is tiny.  Where a GPU is lent, run the suite without the
simulator (``NUMBA_ENABLE_CUDASIM=0``) to compile and run the kernels for
real (see docs/cuda.md).  The CUDA tests skip cleanly when ``numba.cuda``
cannot be used at all.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minitorch as torch
from device_checks import check, cuda_usable, host
from minitorch import nn
from minitorch.nn import functional as F

pytestmark = pytest.mark.cuda

ROOT = Path(__file__).resolve().parents[1]

CUDA = cuda_usable()
requires_cuda = pytest.mark.skipif(not CUDA, reason="no CUDA device and no CUDA simulator "
                                   "(set NUMBA_ENABLE_CUDASIM=1)")


# ---------------------------------------------------------------------------
# devices, moves and errors
# ---------------------------------------------------------------------------
@requires_cuda
def test_devices_and_moves():
    assert torch.device("cuda") == torch.device("cuda")
    assert str(torch.device("cuda:0")) == "cuda:0"
    x = torch.arange(6.0).reshape(2, 3)
    for y in (x.cuda(), x.to("cuda"), x.to(torch.device("cuda:0")),
              x.to("cuda", non_blocking=True), x.cuda(0, non_blocking=True),
              torch.tensor(x.tolist(), device="cuda")):
        assert y.is_cuda and not y.is_cpu and y.device == torch.device("cuda", 0)
        assert y.get_device() == 0
        assert y.tolist() == x.tolist()
    y = x.cuda()
    assert y.type() == "torch.cuda.FloatTensor"
    assert repr(y) == "tensor([[0., 1., 2.],\n        [3., 4., 5.]], device='cuda:0')"
    back = y.cpu()
    assert back.device == torch.device("cpu") and back.numpy().tolist() == x.tolist()
    assert y.to("cuda") is y and x.cpu() is x
    assert y.t().tolist() == x.t().tolist() and y[:, ::2].cpu().tolist() == x[:, ::2].tolist()
    z = torch.zeros(2, 2, device="cuda", dtype=torch.int64)
    assert z.dtype is torch.int64 and z.is_cuda and z.sum().item() == 0
    assert x.untyped_storage().device == torch.device("cpu")
    assert y.untyped_storage().device.type == "cuda" and y.untyped_storage().nbytes() == 24
    assert y[1].data_ptr() == y.data_ptr() + 12
    torch.set_default_device("cuda")
    try:
        made = [torch.zeros(2), torch.arange(3), torch.tensor([1.0]), torch.rand(2),
                nn.Linear(2, 1).weight]
        assert all(t.device == torch.device("cuda", 0) for t in made)
    finally:
        torch.set_default_device("cpu")
    assert torch.zeros(1).device.type == "cpu"


@requires_cuda
def test_numpy_of_a_cuda_tensor_raises_type_error():
    y = torch.ones(3, device="cuda")
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        y.numpy()
    with pytest.raises(TypeError, match="Use Tensor.cpu"):
        np.asarray(y)
    assert y.cpu().numpy().tolist() == [1.0, 1.0, 1.0]
    assert y.numpy(force=True).tolist() == [1.0, 1.0, 1.0]


@requires_cuda
def test_ops_across_devices_raise_runtime_error():
    a, b = torch.ones(2), torch.ones(2, device="cuda")
    msg = ("Expected all tensors to be on the same device, but found at least two devices, "
           "cuda:0 and cpu!")
    for f in (lambda: a + b, lambda: b * a, lambda: torch.cat([a, b]),
              lambda: torch.where(b > 0, a, b), lambda: a @ b,
              lambda: torch.gather(b, 0, torch.tensor([0])),
              lambda: b.index_select(0, torch.tensor([0])),
              lambda: F.embedding(torch.tensor([0]), b.reshape(2, 1)),
              lambda: b.masked_fill(a > 0, 0.0)):
        with pytest.raises(RuntimeError, match=re.escape(msg)):
            f()
    # A CPU scalar (0-d) tensor mixes with CUDA tensors, as in PyTorch.
    check(b + torch.tensor(2.0), [3.0, 3.0], "cuda")
    # copy_ moves across devices, and so does the gradient of .to()
    c = torch.zeros(2, device="cuda")
    c.copy_(torch.tensor([1.0, 2.0]))
    check(c, [1.0, 2.0], "cuda")
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    (w.cuda() * torch.tensor([3.0, 4.0], device="cuda")).sum().backward()
    check(w.grad, [3.0, 4.0], "cpu")


@requires_cuda
def test_missing_device_index_is_a_clear_error():
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.zeros(2, device=f"cuda:{torch.cuda.device_count()}")
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        torch.cuda.set_device(torch.cuda.device_count())


def test_no_cuda_device_error_names_the_cause_and_the_simulator():
    """Without a GPU (and without the simulator) a CUDA tensor is a clear RuntimeError, in
    one line: here (no NVIDIA driver) the driver's message.  One subprocess, ~2 s."""
    code = ("import minitorch as torch\n"
            "from numba import cuda\n"
            "print('AVAILABLE', cuda.is_available(), repr(cuda.cuda_error()))\n"
            "assert torch.cuda.is_available() == cuda.is_available()\n"
            "try:\n"
            "    torch.zeros(1, device='cuda')\n"
            "except RuntimeError as e:\n"
            "    print('ERROR', e)\n")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0", PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    if "AVAILABLE True" in proc.stdout:
        pytest.skip("a real CUDA device is present")
    error = next(line for line in proc.stdout.splitlines() if line.startswith("ERROR "))
    assert error.endswith("NUMBA_ENABLE_CUDASIM=1 before starting Python.")
    if "cannot be found" in proc.stdout.splitlines()[0]:       # no libcuda.so (this machine)
        assert error.startswith("ERROR Found no working NVIDIA driver on your system "
                                "(CUDA driver library cannot be found.)")


class _FakeNumbaCuda:
    """``numba.cuda`` as a machine without a GPU would show it (no driver needed here)."""

    def __init__(self, available: bool, error: str | None = None, gpus=()):
        self._available, self._error, self._gpus = available, error, gpus

    def is_available(self) -> bool:
        return self._available

    def cuda_error(self) -> str | None:
        return self._error

    @property
    def gpus(self):
        if isinstance(self._gpus, Exception):
            raise self._gpus
        return self._gpus


DRIVER_NOT_FOUND = ("\nCUDA driver library cannot be found.\nEnsure that a compatible NVIDIA "
                    "driver is installed and available on your system path.\n")


@pytest.mark.parametrize("numba_cuda, expected, cause", [
    ((None, "numba-cuda is not installed"), "MISSING_LIBRARY", "numba-cuda is not installed"),
    ((None, "importing numba.cuda failed: OSError: libnvrtc.so.12: cannot open shared object"),
     "MISSING_LIBRARY", "libnvrtc.so.12"),
    ((_FakeNumbaCuda(False), None), "MISSING_LIBRARY", "libNVVM"),
    ((_FakeNumbaCuda(False, DRIVER_NOT_FOUND), None), "NO_DRIVER",
     "(CUDA driver library cannot be found.)"),
    ((_FakeNumbaCuda(True, gpus=ImportError("Error at driver init")), None), "NO_DRIVER",
     "Error at driver init"),
    ((_FakeNumbaCuda(False, "Call to cuInit results in CUDA_ERROR_NO_DEVICE (100)"), None),
     "NO_DEVICE", "CUDA_ERROR_NO_DEVICE"),
    ((_FakeNumbaCuda(True, gpus=[]), None), "NO_DEVICE", "0 devices"),
], ids=["no-numba-cuda", "library-fails", "no-nvvm", "no-driver", "driver-fails",
        "cuinit-no-device", "zero-gpus"])
def test_runtime_says_whether_a_library_the_driver_or_a_gpu_is_missing(monkeypatch, numba_cuda,
                                                                       expected, cause):
    from minitorch.backends.cuda import runtime
    monkeypatch.setattr(runtime, "_import_numba_cuda", lambda: numba_cuda)
    monkeypatch.setattr(runtime, "is_simulator", lambda: False)
    monkeypatch.setattr(runtime, "numba_cuda_installed", lambda: True)
    assert runtime.device_count() == 0 and not runtime.is_available()
    with pytest.raises(RuntimeError) as info:
        runtime.check_device(0)
    message = str(info.value)
    assert message == runtime.unavailable_reason() and "\n" not in message
    # Exactly one of the three messages, with numba-cuda's cause in it.
    kinds = {kind: getattr(runtime, f"{kind}_MESSAGE").split("{cause}")[0]
             for kind in ("MISSING_LIBRARY", "NO_DRIVER", "NO_DEVICE")}
    assert len(set(kinds.values())) == 3
    assert [kind for kind, start in kinds.items() if message.startswith(start)] == [expected]
    assert cause in message


@pytest.mark.parametrize("numba_cuda_there", [False, True], ids=["not-installed", "not-redirected"])
def test_numbas_built_in_cuda_target_is_refused_and_numba_cuda_asked_for(monkeypatch,
                                                                       numba_cuda_there):
    # Numba 0.68 still ships a deprecated numba.cuda of its own.  On a real GPU (an H200)
    # it imported, drove the GPU, and failed to compile minitorch's kernels ("Signature
    # mismatch"): it is refused, working driver or not, and the message names the fix.
    from minitorch.backends.cuda import runtime
    monkeypatch.setattr(runtime, "is_simulator", lambda: False)
    monkeypatch.setattr(runtime, "numba_cuda_installed", lambda: numba_cuda_there)
    for built_in in (_FakeNumbaCuda(False, DRIVER_NOT_FOUND), _FakeNumbaCuda(True, gpus=["gpu0"])):
        built_in.implementation = "Built-in"
        monkeypatch.setattr(runtime, "_import_numba_cuda", lambda cuda=built_in: (cuda, None))
        assert runtime.unavailable_reason() == runtime.MISSING_LIBRARY_MESSAGE.format(
            cause=runtime.BUILT_IN_TARGET_CAUSE[numba_cuda_there])
        assert runtime.device_count() == 0 and not runtime.is_available()
    # numba-cuda's own target (implementation "NVIDIA") with a GPU is used.
    nvidia = _FakeNumbaCuda(True, gpus=["gpu0"])
    nvidia.implementation = "NVIDIA"
    monkeypatch.setattr(runtime, "_import_numba_cuda", lambda: (nvidia, None))
    assert runtime.unavailable_reason() is None and runtime.device_count() == 1


def test_a_numba_cuda_that_cannot_load_its_numpy_support_is_refused(monkeypatch):
    # On an H200 with NumPy 2.5.2, numba-cuda 0.30.4 imported and found the GPU, then every
    # kernel compile failed inside it (np.row_stack is gone): one line instead, up front.
    from minitorch.backends.cuda import runtime
    working = _FakeNumbaCuda(True, gpus=["gpu0"])
    working.implementation = "NVIDIA"
    monkeypatch.setattr(runtime, "_import_numba_cuda", lambda: (working, None))
    monkeypatch.setattr(runtime, "is_simulator", lambda: False)
    assert runtime.unavailable_reason() is None   # numba-cuda's NumPy support loads here
    monkeypatch.setitem(sys.modules, "numba.cuda.np.arrayobj", None)   # now it cannot
    message = runtime.unavailable_reason()
    assert message.startswith(runtime.MISSING_LIBRARY_MESSAGE.split("{cause}")[0])
    assert f"NumPy {np.__version__}" in message and "\n" not in message
    assert runtime.device_count() == 0


def test_the_numba_cuda_here_is_numba_cudas_own_target():
    # What the refusal above reads: the numba.cuda the suite runs is numba-cuda's.
    from minitorch.backends.cuda import runtime
    assert runtime.numba_cuda().implementation == "NVIDIA"


def test_runtime_counts_the_gpus_of_a_working_driver(monkeypatch):
    from minitorch.backends.cuda import runtime
    monkeypatch.setattr(runtime, "_import_numba_cuda",
                        lambda: (_FakeNumbaCuda(True, gpus=["gpu0", "gpu1"]), None))
    monkeypatch.setattr(runtime, "is_simulator", lambda: False)
    assert runtime.unavailable_reason() is None
    assert runtime.device_count() == 2 and runtime.check_device(1) == 1
    with pytest.raises(RuntimeError, match="invalid device ordinal: cuda:2 was requested but 2"):
        runtime.check_device(2)


def test_import_minitorch_does_not_import_numba_cuda():
    code = ("import sys, minitorch, minitorch.nn\n"
            "print('numba.cuda' in sys.modules)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


@requires_cuda
def test_cuda_module_functions():
    assert torch.cuda.is_available() is True
    assert torch.cuda.device_count() >= 1
    assert torch.cuda.current_device() == 0
    torch.cuda.set_device(0)
    torch.cuda.set_device("cuda:0")
    assert isinstance(torch.cuda.get_device_name(), str)
    import gc
    gc.collect()
    before = torch.cuda.memory_allocated()
    x = torch.empty(1000, device="cuda")
    assert torch.cuda.memory_allocated() == before + 4000
    del x
    gc.collect()
    assert torch.cuda.memory_allocated() == before
    torch.ones(3, device="cuda").add_(1)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


# ---------------------------------------------------------------------------
# the same training steps on both devices
# ---------------------------------------------------------------------------
class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        # No conv bias: BatchNorm cancels it, so its gradient is rounding noise,
        # which Adam's normalisation would blow up into different steps per device.
        self.conv = nn.Conv2d(1, 2, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(2)
        self.fc = nn.Linear(2 * 2 * 2, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(x.flatten(1))


def _train(device):
    torch.manual_seed(0)
    model = Tiny().to(device)
    x = torch.randn(4, 1, 4, 4).to(device)
    y = torch.tensor([0, 2, 1, 2]).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True,
                          weight_decay=1e-3)
    losses = []
    for _ in range(2):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [host(p) for p in model.parameters()], host(model.bn.running_mean)


@requires_cuda
def test_training_steps_match_the_cpu():
    cpu = _train("cpu")
    gpu = _train("cuda")
    np.testing.assert_allclose(gpu[0], cpu[0], rtol=1e-5)
    for g, c in zip(gpu[1], cpu[1]):
        np.testing.assert_allclose(g, c, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gpu[2], cpu[2], rtol=1e-5, atol=1e-6)


@requires_cuda
def test_module_to_cuda_keeps_parameters_and_state_dict():
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    weight = model[0].weight
    assert model.cuda() is model
    assert model[0].weight is weight and weight.is_cuda and isinstance(weight, nn.Parameter)
    assert model[1].running_mean.is_cuda
    sd = model.state_dict()
    assert all(t.is_cuda for t in sd.values())
    model.cpu()
    assert weight.device.type == "cpu"


@requires_cuda
def test_save_and_load_across_devices(tmp_path):
    x = torch.arange(6.0, device="cuda").reshape(2, 3)
    path = tmp_path / "t.pt"
    torch.save({"x": x, "view": x[1]}, path)
    on_cpu = torch.load(path, map_location="cpu")
    assert on_cpu["x"].device.type == "cpu" and on_cpu["x"].tolist() == x.tolist()
    back = torch.load(path)
    assert back["x"].is_cuda and back["view"].tolist() == [3.0, 4.0, 5.0]
    moved = torch.load(path, map_location="cuda")
    assert moved["x"].is_cuda


# ---------------------------------------------------------------------------
# random numbers: the same seed gives the same numbers on every device
# ---------------------------------------------------------------------------
def _draws(device):
    torch.manual_seed(123)
    out = [torch.rand(5, device=device), torch.rand(3, dtype=torch.float64, device=device),
           torch.randn(5, device=device), torch.randint(-3, 9, (6,), device=device),
           torch.randperm(7, device=device),
           torch.bernoulli(torch.full((6,), 0.5, device=device)),
           torch.multinomial(torch.tensor([[0.1, 0.5, 0.4], [1.0, 0.0, 2.0]], device=device),
                             2),
           torch.multinomial(torch.tensor([0.2, 0.8], device=device), 4, replacement=True),
           F.dropout(torch.ones(8, device=device), 0.5),
           torch.empty(4, device=device).uniform_(-1, 1),
           torch.empty(3, device=device).normal_(2.0, 0.5)]
    return [host(t) for t in out]


@requires_cuda
def test_random_numbers_are_identical_across_devices():
    for g, c in zip(_draws("cuda"), _draws("cpu")):
        np.testing.assert_array_equal(g, c)
    torch.manual_seed(5)
    a = torch.rand(3, device="cuda")
    torch.cuda.manual_seed(5)                # seeds the CUDA generator only
    b = torch.rand(3, device="cuda")
    np.testing.assert_array_equal(host(a), host(b))
    state = torch.cuda.get_rng_state()
    c = torch.rand(2, device="cuda")
    torch.cuda.set_rng_state(state)
    np.testing.assert_array_equal(host(torch.rand(2, device="cuda")), host(c))
    gen = torch.Generator()
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator"):
        torch.rand(2, device="cuda", generator=gen)


@requires_cuda
def test_simulated_kernels_never_grow_their_globals_while_threads_run():
    # Regression: the simulator's threads iterate over a kernel's globals; a
    # first overflow warning inside the counter RNG added __warningregistry__
    # to them mid-launch ("dictionary changed size during iteration", a flaky
    # CI failure).  Every kernel namespace is seeded with the entry up front:
    # the backend modules, and the namespaces the shared bodies are compiled in.
    import types

    from minitorch.backends.cuda import bodies
    torch.rand(64, device="cuda")
    compiled = [m for m in vars(bodies).values() if isinstance(m, types.ModuleType)
                and m.__name__.startswith("minitorch.backends.")
                and m is not sys.modules.get(m.__name__)]        # not the plain sources
    assert {m.__name__.rsplit(".", 1)[1] for m in compiled} >= {"rng", "rows", "scalar_ops"}
    for module in compiled:
        for value in vars(module).values():
            # A compiled body: a device function wrapping the Python function.
            body = getattr(value, "py_func", None) or getattr(value, "fn", None)
            if callable(body):
                assert "__warningregistry__" in body.__globals__, module.__name__
    for name, module in list(sys.modules.items()):
        if name.startswith("minitorch.backends") and module is not None:
            assert "__warningregistry__" in vars(module), name


# ---------------------------------------------------------------------------
# DataParallel: replicate, scatter, apply, gather; gradients sum into the originals
# ---------------------------------------------------------------------------
def _grads(model):
    return [host(p.grad) for p in model.parameters()]


def _dp_case(devices, output_device):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    x = torch.randn(5, 3)
    model(x).pow(2).sum().backward()
    single = _grads(model)
    model.zero_grad()
    replicas = nn.parallel.replicate(model, devices)
    chunks = nn.parallel.scatter(x, devices)
    assert [c.shape[0] for c in chunks] == [3, 2][:len(devices)] or len(devices) != 2
    outs = nn.parallel.parallel_apply(replicas, [(c,) for c in chunks])
    y = nn.parallel.gather(outs, output_device)
    assert y.device == torch.device(output_device) and y.shape == (5, 2)
    y.pow(2).sum().backward()
    for got, want in zip(_grads(model), single):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_data_parallel_functions_on_cpu():
    _dp_case(["cpu", "cpu"], "cpu")


@requires_cuda
def test_data_parallel_functions_across_cpu_and_cuda():
    _dp_case(["cpu", "cuda:0"], "cpu")
    _dp_case(["cpu", "cuda:0", "cuda:0"], "cuda:0")


@requires_cuda
def test_data_parallel_module_on_cuda():
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).cuda()
    x = torch.randn(6, 3, device="cuda")
    model(x).sum().backward()
    single = _grads(model)
    model.zero_grad()
    # One simulated GPU: two replicas on cuda:0 still exercise scatter and gather.
    dp = nn.DataParallel(model, device_ids=[0, 0])
    assert dp.device_ids == [0, 0] and dp.output_device == 0
    out = dp(x)
    assert out.is_cuda and out.shape == (6, 2)
    out.sum().backward()
    for got, want in zip(_grads(model), single):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert list(dp.state_dict()) == ["module.0.weight", "module.0.bias", "module.2.weight",
                                     "module.2.bias"]
    one = nn.DataParallel(model)                       # every device: here just one
    np.testing.assert_allclose(host(one(x.cpu())), host(model(x)), rtol=1e-6)
    with pytest.raises(RuntimeError, match="module must have its parameters and buffers on "
                                           "device cuda:0"):
        nn.DataParallel(nn.Linear(3, 2), device_ids=[0, 0])(x)


def test_data_parallel_without_devices_runs_the_module():
    model = nn.Linear(3, 2)
    dp = nn.DataParallel(model, device_ids=[])
    x = torch.randn(4, 3)
    np.testing.assert_allclose(host(dp(x)), host(model(x)))


# ---------------------------------------------------------------------------
# the command line, and Numba's disk cache guards
# ---------------------------------------------------------------------------
@requires_cuda
def test_cli_info_and_train_on_cuda():
    from click.testing import CliRunner

    from minitorch.cli import main
    result = CliRunner().invoke(main, ["info"])
    assert result.exit_code == 0 and "cuda available: True" in result.output
    result = CliRunner().invoke(main, ["train", "xor", "--device", "cuda", "--epochs", "1",
                                       "--limit", "16", "--batch-size", "8", "--no-progress",
                                       "--json"])
    assert result.exit_code == 0, result.output
    assert '"device": "cuda"' in result.output


@requires_cuda
@pytest.mark.skipif(torch.cuda.is_available() and torch.cuda.is_simulator()
                    and not os.environ.get("MINITORCH_SLOW_CUDASIM_TESTS"),
                    reason="about 10-30 s on the CUDA simulator; set "
                           "MINITORCH_SLOW_CUDASIM_TESTS=1 to run it there")
def test_cli_train_mnist_on_cuda():
    from click.testing import CliRunner

    from minitorch.cli import main
    result = CliRunner().invoke(main, ["train", "mnist", "--model", "mlp", "--device", "cuda",
                                       "--epochs", "1", "--limit", "8", "--batch-size", "8",
                                       "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "epoch   1/1" in result.output


def test_runtime_queries_live_below_the_backends():
    """minitorch.cuda is a thin wrapper over backends/cuda/runtime.py; no upward import."""
    from minitorch.backends.cuda import runtime
    assert torch.cuda.NO_CUDA_MESSAGE == runtime.NO_CUDA_MESSAGE
    assert torch.cuda.is_available() == runtime.is_available()
    assert torch.cuda.device_count() == runtime.device_count()
    backends = ROOT / "minitorch" / "backends"
    upward = re.compile(r"^\s*from \.\.\.+(cuda|ops|tensor|autograd|nn)\b|^\s*from minitorch\.cuda",
                        re.M)
    for path in backends.rglob("*.py"):
        assert not upward.search(path.read_text()), path
    for device, other in (("cpu", "cuda"), ("cuda", "cpu")):
        for path in (backends / device).glob("*.py"):
            text = path.read_text()
            assert f"from ..{other}" not in text and f"backends.{other}" not in text, path


@requires_cuda
def test_runtime_device_state():
    from minitorch.backends.cuda import runtime
    assert torch.cuda.current_device() == runtime.current_device() == 0
    torch.cuda.set_device("cuda:0")
    assert runtime.current_index() == 0
    torch.zeros(1, device="cuda")
    assert runtime.active_device() == 0
    name = torch.cuda.get_device_name()
    assert name == runtime.device_name(0) and isinstance(name, str)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        runtime.check_device(torch.cuda.device_count())


class _Item:
    """Just what ``device_checks.not_on_both_devices`` reads of a collected pytest item."""

    def __init__(self, nodeid, markers, fixturenames=()):
        self.nodeid, self.fixturenames = nodeid, fixturenames
        self._markers = {m.name: m for m in markers}

    def get_closest_marker(self, name):
        return self._markers.get(name)


def test_an_op_test_runs_on_both_devices_or_says_why_not():
    from device_checks import not_on_both_devices

    ops, kernels = pytest.mark.ops.mark, pytest.mark.kernels.mark
    items = [
        _Item("tests/test_a.py::test_on_both", [ops], ("default_device", "device")),
        _Item("tests/test_a.py::test_cpu_only", [ops, pytest.mark.cpu_only("why").mark]),
        _Item("tests/test_a.py::test_silent", [ops]),                         # refused
        _Item("tests/test_a.py::test_no_reason", [ops, pytest.mark.cpu_only.mark]),  # refused
        _Item("tests/test_a.py::test_a_kernel", [kernels]),                  # not an op test
        _Item("tests/course/test_m1.py::test_task", [ops]),                 # a course task's
    ]
    assert not_on_both_devices(items) == ["tests/test_a.py::test_silent",
                                          "tests/test_a.py::test_no_reason"]


def test_small_grids_do_not_warn_of_low_occupancy():
    # On an H200 numba-cuda printed "Grid size 1 will likely result in GPU
    # under-utilization" at nearly every op of `minitorch train`: minitorch sizes grids to
    # the data, so that warning is filtered out, unless the user set numba-cuda's switch
    # for it.  (A filter, not the switch: a NUMBA_ variable set in os.environ makes Numba
    # re-read its configuration, undoing settings made in code.)
    code = ("import os, warnings, minitorch\n"
            "from numba.core.errors import NumbaPerformanceWarning\n"
            "before = dict(os.environ)\n"
            "minitorch.ones(2, device='cuda') + 1\n"
            "assert dict(os.environ) == before, 'the environment changed'\n"
            "warnings.warn(NumbaPerformanceWarning('Grid size 1 will likely result in GPU "
            "under-utilization due to low occupancy.'))\n"
            "warnings.warn(NumbaPerformanceWarning('another performance warning'))\n")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"}
    shown = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "under-utilization" not in shown.stderr and "another performance" in shown.stderr
    env["NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"] = "1"      # the user asked for the warning
    shown = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True)
    assert "under-utilization" in shown.stderr
