"""The Tensor itself: dtypes and promotion, creation, random numbers, the header, conversions.

Expectations are hard-coded from PyTorch's documented behaviour; where
PyTorch is installed, some tests also compare against it directly.
"""

import itertools
import warnings

import numpy as np
import pytest

import minitorch as torch
from device_checks import simulated

pytestmark = pytest.mark.tensor


DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
               "float64"]
DTYPES = [getattr(torch, n) for n in DTYPE_NAMES]


# ---------------------------------------------------------------------------
# dtypes and promotion
# ---------------------------------------------------------------------------
def test_dtype_aliases_and_attributes(default_device):
    assert torch.float is torch.float32 and torch.double is torch.float64
    assert torch.half is torch.float16 and torch.long is torch.int64
    assert torch.int is torch.int32 and torch.short is torch.int16
    assert repr(torch.float32) == "minitorch.float32"
    assert torch.float16.itemsize == 2 and torch.float64.itemsize == 8
    assert torch.float32.is_floating_point and not torch.int32.is_floating_point
    assert torch.int32.is_signed and not torch.uint8.is_signed and not torch.bool.is_signed
    assert torch.float32 == torch.float and torch.float32 != torch.float64


@pytest.mark.parametrize("a, b, expected", [
    ("uint8", "int8", "int16"), ("bool", "float16", "float16"), ("int32", "float16", "float16"),
    ("int64", "float32", "float32"), ("uint8", "int64", "int64"), ("bool", "uint8", "uint8"),
    ("float16", "float64", "float64"), ("int8", "int16", "int16"), ("bool", "bool", "bool"),
])
def test_promote_types_table(default_device, a, b, expected):
    assert torch.promote_types(getattr(torch, a), getattr(torch, b)) is getattr(torch, expected)
    assert torch.promote_types(getattr(torch, b), getattr(torch, a)) is getattr(torch, expected)


def test_promote_types_matches_pytorch_for_every_pair(default_device):
    real = pytest.importorskip("torch")
    for a, b in itertools.product(DTYPE_NAMES, DTYPE_NAMES):
        want = str(real.promote_types(getattr(real, a), getattr(real, b))).split(".")[-1]
        assert torch.promote_types(getattr(torch, a), getattr(torch, b)).name == want, (a, b)


def _t(lib, dt_name, dims):
    return lib.ones((2,) if dims else (), dtype=getattr(lib, dt_name))


def test_result_type_matches_pytorch_for_tensors_zero_dim_and_scalars(default_device):
    real = pytest.importorskip("torch")
    for a, b in itertools.product(DTYPE_NAMES, DTYPE_NAMES):
        for da, db in ((True, False), (False, True), (False, False), (True, True)):
            want = real.result_type(_t(real, a, da), _t(real, b, db))
            got = torch.result_type(_t(torch, a, da), _t(torch, b, db))
            assert got.name == str(want).split(".")[-1], (a, b, da, db)
    for a in DTYPE_NAMES:
        for scalar in (True, 3, 2.5):
            for dims in (True, False):
                want = real.result_type(_t(real, a, dims), scalar)
                got = torch.result_type(_t(torch, a, dims), scalar)
                assert got.name == str(want).split(".")[-1], (a, scalar, dims)


@pytest.mark.parametrize("expr, expected", [
    ("torch.tensor([1, 2]) + 1.5", "float32"),
    ("torch.tensor([1, 2]) / 2", "float32"),
    ("torch.tensor([1, 2]) // 2", "int64"),
    ("torch.tensor([1, 2]) + torch.tensor(1.0, dtype=torch.float64)", "float64"),
    ("torch.tensor([1.0]) + torch.tensor(1.0, dtype=torch.float64)", "float32"),
    ("torch.tensor([1.0]) + torch.tensor([1.0], dtype=torch.float64)", "float64"),
    ("torch.tensor([1, 2], dtype=torch.int32) + 5", "int32"),
    ("torch.tensor([1, 2], dtype=torch.uint8) + torch.tensor([1], dtype=torch.int8)", "int16"),
    ("torch.tensor([True]) + True", "bool"),
    ("torch.tensor([True]) + 1", "int64"),
    ("torch.tensor([1, 2]) + True", "int64"),
    ("torch.tensor([1.0], dtype=torch.float16) * 3.0", "float16"),
    ("torch.tensor(2) * 1.5", "float32"),
    ("torch.tensor([1], dtype=torch.int8) * torch.tensor(300)", "int8"),
    ("torch.tensor([1, 2]) < 1.5", "bool"),
    ("torch.tensor([1, 2]).sum()", "int64"),
    ("torch.tensor([True, True]).sum()", "int64"),
    ("torch.tensor([1, 2], dtype=torch.int32).sqrt()", "float32"),
])
def test_promotion_in_operations(default_device, expr, expected):
    if default_device == "cuda" and simulated() and "300" in expr:
        pytest.skip("the simulator stores through NumPy, which refuses 300 in an int8 "
                    "(a GPU wraps it, as the CPU does)")
    assert eval(expr).dtype is getattr(torch, expected)


def test_result_type_with_python_numbers_only(default_device):
    assert torch.result_type(2, 3.0) is torch.float32
    assert torch.result_type(torch.tensor(2), 3.0) is torch.float32


def test_can_cast(default_device):
    assert not torch.can_cast(torch.float32, torch.int32)
    assert torch.can_cast(torch.int32, torch.float32)
    assert torch.can_cast(torch.int64, torch.int8)
    assert torch.can_cast(torch.bool, torch.int8)
    assert not torch.can_cast(torch.int8, torch.bool)
    assert torch.can_cast(torch.float64, torch.float16)


# ---------------------------------------------------------------------------
# creation from data
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("data, dtype", [
    ([1, 2], "int64"), ([1.0, 2], "float32"), (True, "bool"), ([], "float32"),
    ([1, 2.5], "float32"), ([True, 2], "int64"), (np.float32(1.5), "float32"),
    (np.float64(1.5), "float64"), ([np.float64(1.0)], "float64"), (np.int32(3), "int32"),
    (np.array([1, 2], dtype=np.int32), "int32"), (np.zeros(2, dtype=np.float16), "float16"),
    (3, "int64"), (2.5, "float32"), ([[1, 2], [3, 4]], "int64"), ((1.0, 2.0), "float32"),
])
def test_tensor_infers_dtype_like_pytorch(default_device, data, dtype):
    assert torch.tensor(data).dtype is getattr(torch, dtype)


def test_tensor_copies_and_keeps_precision(default_device):
    a = np.array([1.0, 2.0])
    t = torch.tensor(a)
    a[0] = 100
    assert t.tolist() == [1.0, 2.0] and t.dtype is torch.float64
    x = torch.tensor([0.1, 1 / 3], dtype=torch.float64)
    assert x.tolist() == [0.1, 1 / 3]          # not rounded through float32
    assert torch.tensor([1.7, -1.7], dtype=torch.int64).tolist() == [1, -1]
    assert torch.tensor(3).shape == () and torch.tensor([[]]).shape == (1, 0)


def test_tensor_bad_data(default_device):
    with pytest.raises(ValueError):
        torch.tensor([[1, 2], [3]])
    with pytest.raises(TypeError):
        torch.tensor("a")
    with pytest.raises(RuntimeError, match="floating point"):
        torch.tensor([1, 2], requires_grad=True)


def test_tensor_of_a_tensor_warns_and_copies(default_device):
    a = torch.tensor([1.0, 2.0])
    with pytest.warns(UserWarning, match="clone"):
        b = torch.tensor(a)
    b[0] = 5
    assert a.tolist() == [1.0, 2.0]


def test_tensor_keywords(default_device):
    t = torch.tensor([1, 2], dtype=torch.float64, device="cpu", requires_grad=True)
    assert t.dtype is torch.float64 and t.device == torch.device("cpu")
    assert t.requires_grad and t.is_leaf


@pytest.mark.cpu_only("CPU type strings and legacy constructors (cuda's: test_cuda.py)")
def test_legacy_constructor():
    assert torch.Tensor([1, 2]).dtype is torch.float32
    assert torch.Tensor(2, 3).shape == (2, 3)
    assert torch.Tensor().shape == (0,)
    assert torch.Tensor(torch.Size([2])).shape == (2,)
    assert repr(torch.Tensor([1, 2])) == "tensor([1., 2.])"


def test_as_tensor_shares_when_it_can(default_device):
    a = np.array([1.0, 2.0])
    t = torch.as_tensor(a)
    a[0] = 7
    assert t[0].item() == 7
    assert torch.as_tensor(t) is t
    assert torch.as_tensor(a, dtype=torch.float32).dtype is torch.float32
    assert torch.as_tensor([1, 2]).dtype is torch.int64
    assert torch.asarray([1.5]).dtype is torch.float32


def test_from_numpy_shares_memory_both_ways(default_device):
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = torch.from_numpy(a)
    a[0, 0] = 100
    assert t[0, 0].item() == 100
    t[1, 2] = -1
    assert a[1, 2] == -1
    n = t.cpu().numpy()
    n[0, 1] = 42
    assert t[0, 1].item() == 42 and np.shares_memory(n, a)


def test_from_numpy_strides_and_errors(default_device):
    a = np.arange(6).reshape(2, 3)
    assert torch.from_numpy(a[:, ::2]).stride() == (3, 2)
    assert torch.from_numpy(np.zeros((2, 3), order="F")).stride() == (1, 2)
    assert not torch.from_numpy(np.zeros((2, 3), order="F")).is_contiguous()
    assert torch.from_numpy(np.zeros((2, 0))).shape == (2, 0)
    with pytest.raises(ValueError, match="negative"):
        torch.from_numpy(a[:, ::-1])
    with pytest.raises(TypeError):
        torch.from_numpy([1, 2])
    with pytest.raises(TypeError):
        torch.from_numpy(np.zeros(2, dtype=np.complex64))


@pytest.mark.cpu_only("NumPy shares a CPU tensor's memory (cuda refuses: test_cuda.py)")
def test_numpy_of_a_tensor_requiring_grad():
    t = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        t.numpy()
    with pytest.raises(RuntimeError, match="requires grad"):
        np.asarray(t)
    assert t.detach().numpy().tolist() == [1.0, 1.0]


@pytest.mark.cpu_only("NumPy shares a CPU tensor's memory (cuda refuses: test_cuda.py)")
def test_array_protocol():
    t = torch.arange(6).view(2, 3).t()
    n = np.asarray(t)
    assert n.shape == (3, 2) and n.tolist() == [[0, 3], [1, 4], [2, 5]]
    assert np.asarray(torch.arange(3.0), dtype=np.float64).dtype == np.float64
    assert t.numpy().strides == (8, 24)
    assert torch.tensor(3.0).numpy().shape == ()


# ---------------------------------------------------------------------------
# factories
# ---------------------------------------------------------------------------
def test_arange(default_device):
    assert torch.arange(5).tolist() == [0, 1, 2, 3, 4] and torch.arange(5).dtype is torch.int64
    assert torch.arange(1, 4, 0.5).tolist() == [1.0, 1.5, 2.0, 2.5, 3.0, 3.5]
    assert torch.arange(0, 1, 0.1).shape == (10,)
    assert torch.arange(5, dtype=torch.float32).dtype is torch.float32
    assert torch.arange(1.0, 4.0).dtype is torch.float32
    assert torch.arange(10, 0, -3).tolist() == [10, 7, 4, 1]
    assert torch.arange(3, 3).shape == (0,)
    with pytest.raises(RuntimeError):
        torch.arange(0, 10, -1)
    with pytest.raises(RuntimeError):
        torch.arange(0, 5, 0)


def test_linspace_and_logspace(default_device):
    np.testing.assert_allclose(torch.linspace(0, 1, 5).cpu().numpy(), np.linspace(0, 1, 5))
    assert torch.linspace(0, 10, 5, dtype=torch.int64).tolist() == [0, 2, 5, 7, 10]
    assert torch.linspace(0, 1, 1).tolist() == [0.0] and torch.linspace(0, 1, 0).shape == (0,)
    assert torch.linspace(0, 1, 3).dtype is torch.float32
    np.testing.assert_allclose(torch.logspace(0, 2, 3).cpu().numpy(), [1, 10, 100])
    np.testing.assert_allclose(torch.logspace(0, 2, 3, base=2).cpu().numpy(), [1, 2, 4])
    with pytest.raises(RuntimeError):
        torch.linspace(0, 1, -1)


@pytest.mark.parametrize("factory, value", [(torch.zeros, 0), (torch.ones, 1),
                                            (torch.empty, None)])
def test_filled_factories(default_device, factory, value):
    for args in [(2, 3), ((2, 3),), ([2, 3],), (torch.Size([2, 3]),)]:
        t = factory(*args)
        assert t.shape == (2, 3) and t.dtype is torch.float32 and t.is_contiguous()
        if value is not None:
            assert (t == value).all()
    assert factory(()).shape == () and factory(0).shape == (0,)
    t = factory(2, dtype=torch.int32, requires_grad=False)
    assert t.dtype is torch.int32
    assert factory(2, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError):
        factory(2, -1)
    with pytest.raises(TypeError):
        factory(2.5)


def test_full_and_eye(default_device):
    assert torch.full((2,), 3).dtype is torch.int64
    assert torch.full((2,), 3.0).dtype is torch.float32
    assert torch.full((2,), True).dtype is torch.bool
    assert torch.full((2, 2), 1.5, dtype=torch.int64).tolist() == [[1, 1], [1, 1]]
    assert torch.eye(3).tolist() == np.eye(3).tolist()
    assert torch.eye(2, 3).tolist() == np.eye(2, 3).tolist()
    assert torch.eye(2, 3, dtype=torch.int64).dtype is torch.int64
    assert torch.eye(0).shape == (0, 0)


def test_like_factories(default_device):
    src = torch.tensor([[1, 2], [3, 4]])
    assert torch.zeros_like(src).tolist() == [[0, 0], [0, 0]]
    assert torch.zeros_like(src).dtype is torch.int64
    assert torch.ones_like(src, dtype=torch.float64).dtype is torch.float64
    assert torch.full_like(src, 2.7).tolist() == [[2, 2], [2, 2]]
    assert torch.empty_like(src).shape == (2, 2)
    assert torch.ones_like(torch.ones(2), requires_grad=True).requires_grad
    assert torch.rand_like(torch.ones(3, dtype=torch.float64)).dtype is torch.float64
    assert torch.randn_like(torch.ones(2, 2)).shape == (2, 2)
    r = torch.randint_like(torch.zeros(100), 5)
    assert r.dtype is torch.float32 and r.min() >= 0 and r.max() < 5
    assert torch.randint_like(torch.zeros(2), 3, 5).shape == (2,)
    with pytest.raises(NotImplementedError):
        torch.rand_like(torch.tensor([1, 2]))
    # a like-factory keeps the source's memory order (preserve_format), as PyTorch does
    src_t = torch.zeros(3, 2).t()
    for like in (torch.zeros_like, torch.ones_like, torch.empty_like, torch.rand_like,
                 torch.randn_like):
        assert like(src_t).stride() == (1, 2)
        assert like(src_t, memory_format=torch.contiguous_format).is_contiguous()
    assert torch.full_like(src_t, 3.0).stride() == (1, 2)
    assert torch.zeros_like(torch.zeros(3, 1).expand(3, 4)).stride() == (4, 1)


def test_memory_formats_follow_pytorch(default_device):
    """Results keep their inputs' memory order (TensorIterator's rule), as in PyTorch."""
    a, b = torch.ones(4, 3).t(), torch.ones(3, 1)
    for result in (a + b, b + a, a * 2, a > 0, a.exp(), a.double(), a.clone(), -a,
                   torch.where(a > 0, a, 0.0), a.sigmoid()):
        assert result.stride() == (1, 3), result
    assert (a + a.contiguous()).stride() == (1, 3)          # the first input decides
    assert (a.contiguous() + a).stride() == (4, 1)
    assert a.contiguous().stride() == (4, 1) and a.contiguous().is_contiguous()
    z = torch.ones(4, 1, 3).permute(2, 1, 0)                  # a size-1 dim keeps its stride
    assert (z + 1).stride() == (1, 3, 3) and z.clone().stride() == (1, 3, 3)
    sliced = torch.ones(3, 4).t()[:, ::2]                      # not dense: made dense, same order
    assert sliced.clone().stride() == (1, 4) and torch.empty_like(sliced).stride() == (1, 4)
    expanded = torch.ones(3, 1).expand(3, 4)
    assert (expanded + 1).stride() == (4, 1) and expanded.clone().stride() == (4, 1)
    assert torch.equal(a.exp(), a.contiguous().exp()) and (a + b).tolist() == [[2.0] * 4] * 3
    # channels_last
    img = torch.arange(120.0).reshape(2, 3, 4, 5)
    cl = img.contiguous(memory_format=torch.channels_last)
    assert cl.stride() == (60, 1, 15, 3) and cl.is_contiguous(memory_format=torch.channels_last)
    assert not cl.is_contiguous() and torch.equal(cl, img)
    assert img.to(memory_format=torch.channels_last).stride() == (60, 1, 15, 3)
    assert (cl * 2).stride() == (60, 1, 15, 3)
    assert torch.empty_like(img, memory_format=torch.channels_last).stride() == (60, 1, 15, 3)
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported"):
        img.contiguous(memory_format=torch.preserve_format)
    assert repr(torch.preserve_format) == "minitorch.preserve_format"
    # .grad follows the layout of its (dense) leaf
    w = torch.ones(4, 3).t().detach().requires_grad_()
    (w * torch.ones(3, 4)).sum().backward()
    assert w.grad.stride() == (1, 3)
    v = torch.ones(4, 3, requires_grad=True)
    (v.t() * 2).sum().backward()
    assert v.grad.stride() == (3, 1)


def test_new_factories(default_device):
    base = torch.ones(2, dtype=torch.float64)
    assert base.new_zeros(3).dtype is torch.float64 and base.new_zeros(3).shape == (3,)
    assert base.new_ones((2, 2)).shape == (2, 2)
    assert base.new_full((2,), 7).tolist() == [7.0, 7.0]
    assert base.new_tensor([1, 2]).dtype is torch.float64
    assert base.new_empty(4).shape == (4,)


FACTORIES = [
    ("tensor", lambda **kw: torch.tensor([1.0, 2.0], **kw)),
    ("as_tensor", lambda **kw: torch.as_tensor([1.0, 2.0], **{k: v for k, v in kw.items()
                                                              if k != "requires_grad"})),
    ("zeros", lambda **kw: torch.zeros(2, **kw)), ("ones", lambda **kw: torch.ones(2, **kw)),
    ("empty", lambda **kw: torch.empty(2, **kw)), ("full", lambda **kw: torch.full((2,), 3, **kw)),
    ("eye", lambda **kw: torch.eye(2, **kw)), ("arange", lambda **kw: torch.arange(2, **kw)),
    ("linspace", lambda **kw: torch.linspace(0, 1, 2, **kw)),
    ("logspace", lambda **kw: torch.logspace(0, 1, 2, **kw)),
    ("rand", lambda **kw: torch.rand(2, **kw)), ("randn", lambda **kw: torch.randn(2, **kw)),
    ("randint", lambda **kw: torch.randint(0, 5, (2,), **kw)),
    ("randperm", lambda **kw: torch.randperm(2, **kw)),
    ("normal", lambda **kw: torch.normal(0.0, 1.0, size=(2,), **kw)),
    ("zeros_like", lambda **kw: torch.zeros_like(torch.ones(2), **kw)),
    ("ones_like", lambda **kw: torch.ones_like(torch.ones(2), **kw)),
    ("full_like", lambda **kw: torch.full_like(torch.ones(2), 3, **kw)),
    ("empty_like", lambda **kw: torch.empty_like(torch.ones(2), **kw)),
    ("rand_like", lambda **kw: torch.rand_like(torch.ones(2), **kw)),
    ("randn_like", lambda **kw: torch.randn_like(torch.ones(2), **kw)),
    ("randint_like", lambda **kw: torch.randint_like(torch.ones(2), 5, **kw)),
]


@pytest.mark.parametrize("name, make", FACTORIES, ids=[f[0] for f in FACTORIES])
def test_factories_take_dtype_device_and_requires_grad(default_device, name, make):
    t = make(dtype=torch.float64, device="cpu")
    assert t.dtype is torch.float64 and t.device == torch.device("cpu")
    assert t.is_leaf and not t.requires_grad
    assert make(device=torch.device("cpu")).device.type == "cpu"
    if name != "as_tensor":
        g = make(dtype=torch.float64, requires_grad=True)
        assert g.requires_grad and g.is_leaf and g.grad_fn is None


def test_factories_reject_an_unknown_device(default_device):
    with pytest.raises(RuntimeError):
        torch.zeros(2, device="tpu")


# ---------------------------------------------------------------------------
# random numbers
# ---------------------------------------------------------------------------
def test_manual_seed_makes_every_sampler_reproducible(default_device):
    def draw():
        return [torch.rand(5).tolist(), torch.randn(5).tolist(), torch.randint(0, 10, (5,)).tolist(),
                torch.randperm(7).tolist(), torch.normal(0.0, 1.0, size=(3,)).tolist(),
                torch.bernoulli(torch.full((6,), 0.5)).tolist(),
                torch.multinomial(torch.tensor([0.2, 0.3, 0.5]), 2).tolist()]
    g = torch.manual_seed(1234)
    assert isinstance(g, torch.Generator) and torch.initial_seed() == 1234
    first = draw()
    torch.manual_seed(1234)
    assert draw() == first
    torch.manual_seed(4321)
    assert draw() != first


@pytest.mark.cpu_only("CPU generators (cuda's, against the CPU's: test_cuda.py)")
def test_generator_objects_are_independent_streams():
    g1 = torch.Generator().manual_seed(7)
    g2 = torch.Generator().manual_seed(7)
    a = torch.rand(4, generator=g1)
    torch.rand(100)                          # the default stream does not disturb g2
    assert torch.rand(4, generator=g2).tolist() == a.tolist()
    assert torch.rand(4, generator=g1).tolist() != a.tolist()
    state = g1.get_state()
    x = torch.randn(3, generator=g1)
    g1.set_state(state)
    assert torch.randn(3, generator=g1).tolist() == x.tolist()
    assert g1.initial_seed() == 7


@pytest.mark.cpu_only("CPU generators (cuda's, against the CPU's: test_cuda.py)")
def test_rng_state_round_trip():
    state = torch.get_rng_state()
    a = torch.rand(3)
    torch.set_rng_state(state)
    assert torch.rand(3).tolist() == a.tolist()


def test_random_distributions_look_right(default_device):
    torch.manual_seed(0)
    many = 20000 if default_device == "cpu" else 5000     # the simulator is slow; 5000 will do
    u = torch.rand(many, dtype=torch.float64).cpu().numpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.02
    n = torch.randn(many, dtype=torch.float64).cpu().numpy()
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1) < 0.05
    r = torch.randint(3, 10, (5000,)).cpu().numpy()
    assert r.min() == 3 and r.max() == 9
    assert sorted(torch.randperm(50).tolist()) == list(range(50))
    m = torch.normal(torch.full((5000,), 5.0), 2.0).cpu().numpy()
    assert abs(m.mean() - 5) < 0.2 and abs(m.std() - 2) < 0.2
    assert torch.normal(torch.zeros(3), torch.ones(2, 1)).shape == (2, 3)
    b = torch.bernoulli(torch.full((5000,), 0.3)).cpu().numpy()
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.05
    assert torch.bernoulli(torch.full((3,), 1.0)).tolist() == [1.0, 1.0, 1.0]
    assert torch.bernoulli(torch.zeros(3)).tolist() == [0.0, 0.0, 0.0]
    draws = torch.multinomial(torch.tensor([0.0, 1.0, 0.0]), 4, replacement=True)
    assert draws.tolist() == [1, 1, 1, 1] and draws.dtype is torch.int64
    rows = torch.multinomial(torch.tensor([[0.0, 1.0], [1.0, 0.0]]), 1)
    assert rows.tolist() == [[1], [0]]
    perm = torch.multinomial(torch.ones(5), 5)
    assert sorted(perm.tolist()) == [0, 1, 2, 3, 4]


def test_random_factories_dtypes_and_errors(default_device):
    assert torch.rand(2, 3).dtype is torch.float32
    assert torch.randn(2, dtype=torch.float64).dtype is torch.float64
    assert torch.randint(0, 10, (3,)).dtype is torch.int64
    assert torch.randint(10, (3,)).shape == (3,)
    assert torch.randint(3, 10, (2,), dtype=torch.float32).dtype is torch.float32
    assert torch.randperm(4, dtype=torch.float32).dtype is torch.float32
    assert torch.randperm(0).shape == (0,)
    assert torch.rand(2, requires_grad=True).requires_grad
    with pytest.raises(NotImplementedError):
        torch.rand(2, dtype=torch.int64)
    with pytest.raises(RuntimeError):
        torch.randint(5, 5, (3,))
    with pytest.raises(RuntimeError):
        torch.normal(0.0, -1.0, size=(2,))
    with pytest.raises(RuntimeError):
        torch.bernoulli(torch.full((3,), 2.0))
    with pytest.raises(RuntimeError):
        torch.multinomial(torch.tensor([0.5, 0.5]), 3)


def test_in_place_random_fills(default_device):
    torch.manual_seed(3)
    t = torch.empty(1000)
    assert t.uniform_(2, 3) is t and t.min() >= 2 and t.max() < 3
    t.normal_(10, 0.1)
    assert abs(t.mean().item() - 10) < 0.05
    strided = torch.zeros(4, 6)[:, ::2]
    strided.uniform_()
    assert (strided > 0).all()


# ---------------------------------------------------------------------------
# global settings
# ---------------------------------------------------------------------------
@pytest.mark.cpu_only("a CPU tensor's repr (cuda's adds device='cuda:0': test_cuda.py)")
def test_set_default_dtype():
    assert torch.get_default_dtype() is torch.float32
    torch.set_default_dtype(torch.float64)
    try:
        assert torch.tensor([1.5]).dtype is torch.float64
        assert torch.zeros(2).dtype is torch.float64 and torch.rand(2).dtype is torch.float64
        assert torch.arange(0.0, 1.0, 0.5).dtype is torch.float64
        assert (torch.tensor([1, 2]) / 2).dtype is torch.float64
        assert (torch.tensor([1, 2]) + 0.5).dtype is torch.float64
        assert repr(torch.tensor([1.5])) == "tensor([1.5000])"
        assert repr(torch.tensor([1.5], dtype=torch.float32)) == \
            "tensor([1.5000], dtype=minitorch.float32)"
        assert torch.Tensor([1]).dtype is torch.float64 and torch.Tensor(2).dtype is \
            torch.float64
    finally:
        torch.set_default_dtype(torch.float32)
    assert torch.tensor([1.5]).dtype is torch.float32
    with pytest.raises(TypeError, match="only floating-point types"):
        torch.set_default_dtype(torch.int64)


# ---------------------------------------------------------------------------
# the header
# ---------------------------------------------------------------------------
def test_stride_size_and_storage_offset(default_device):
    a = torch.arange(6).view(2, 3)
    assert a.stride() == (3, 1) and a.stride(0) == 3 and a.stride(-1) == 1
    assert a.t().stride(0) == 1
    assert a.size() == (2, 3) and a.size(1) == 3 and a.size(-2) == 2
    assert a.shape == torch.Size([2, 3]) and isinstance(a.shape, tuple)
    assert a[1].storage_offset() == 3 and a[:, 1].storage_offset() == 1
    with pytest.raises(IndexError):
        a.stride(2)
    with pytest.raises(IndexError):
        a.size(2)
    s = torch.tensor(1)
    assert s.stride() == () and s.size() == ()
    with pytest.raises(IndexError):
        s.size(0)
    with pytest.raises(IndexError):
        s.stride(0)


def test_is_contiguous_rules(default_device):
    assert torch.arange(6).view(2, 3).is_contiguous()
    assert not torch.arange(6).view(2, 3)[:, 1].is_contiguous()
    assert torch.zeros(2, 1, 3).transpose(0, 1).is_contiguous()    # size-1 dims are free
    assert torch.zeros(0, 3).t().is_contiguous()                   # empty: always
    assert not torch.zeros(3, 1).expand(3, 4).is_contiguous()
    assert not torch.zeros(1, 4).expand(3, 4).is_contiguous()


def test_sizes_in_elements_and_bytes(default_device):
    t = torch.zeros(2, 3)
    assert t.element_size() == 4 and t.itemsize == 4 and t.nbytes == 24
    assert torch.zeros(2, dtype=torch.float16).element_size() == 2
    assert torch.zeros(2, dtype=torch.bool).element_size() == 1
    assert torch.zeros(2, dtype=torch.float64).element_size() == 8
    assert t.numel() == 6 and t.nelement() == 6 and torch.numel(t) == 6
    assert t.ndim == 2 and t.dim() == 2 and t.ndimension() == 2
    assert torch.Size([2, 3]).numel() == 6
    assert t.shape[1:] == (3,) and isinstance(t.shape[1:], torch.Size)


def test_data_ptr_and_untyped_storage(default_device):
    a = torch.zeros(2, 3)
    assert a[1].data_ptr() - a.data_ptr() == 12
    assert a[:, 2].data_ptr() - a.data_ptr() == 8
    assert a[1:].untyped_storage().data_ptr() == a.untyped_storage().data_ptr()
    assert a[1:].untyped_storage().nbytes() == 24
    assert torch.zeros(3, dtype=torch.float64).untyped_storage().nbytes() == 24
    b = a.clone()
    assert b.data_ptr() != a.data_ptr()


def test_len_iter_and_bool(default_device):
    t = torch.zeros(2, 3)
    assert len(t) == 2
    assert [x.shape for x in t] == [(3,), (3,)]
    with pytest.raises(TypeError):
        len(torch.tensor(1))
    with pytest.raises(TypeError):
        iter(torch.tensor(1))
    assert bool(torch.tensor([1])) and not bool(torch.tensor([0.0]))
    assert bool(torch.tensor(float("nan")))
    assert bool(torch.tensor([[True]]))
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(torch.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(torch.tensor([]))


def test_item_and_python_conversions(default_device):
    assert torch.tensor([3]).item() == 3 and isinstance(torch.tensor(2).item(), int)
    assert torch.tensor([[3.5]]).item() == 3.5 and isinstance(torch.tensor(2.0).item(), float)
    assert torch.tensor(True).item() is True
    with pytest.raises(RuntimeError):
        torch.tensor([1, 2]).item()
    with pytest.raises(RuntimeError):
        torch.tensor([]).item()
    assert int(torch.tensor([2.7])) == 2 and float(torch.tensor([2])) == 2.0
    with pytest.raises(ValueError, match="only one element tensors"):
        int(torch.tensor([2, 3]))
    assert [1, 2, 3][torch.tensor(1)] == 2
    with pytest.raises(TypeError):
        [1, 2, 3][torch.tensor(1.0)]
    assert f"{torch.tensor(2.5):.2f}" == "2.50"
    with pytest.raises(TypeError):
        f"{torch.tensor([2.5]):.3f}"


def test_tolist(default_device):
    assert torch.arange(4).view(2, 2).tolist() == [[0, 1], [2, 3]]
    assert torch.tensor(2.5).tolist() == 2.5
    assert torch.zeros(2, dtype=torch.bool).tolist() == [False, False]
    assert torch.arange(6).view(2, 3).t().tolist() == [[0, 3], [1, 4], [2, 5]]
    assert type(torch.tensor([1.5]).tolist()[0]) is float


@pytest.mark.cpu_only("a CPU tensor's device and .to('cpu') (cuda's: test_cuda.py)")
def test_leaf_and_device_attributes():
    t = torch.zeros(2)
    assert t.is_leaf and not t.requires_grad and t.grad is None and t.grad_fn is None
    assert t.device == torch.device("cpu") and not t.is_cuda and t.is_cpu
    assert t.get_device() == -1
    assert str(torch.device("cuda:1")) == "cuda:1"
    assert torch.device("cuda", 1) == torch.device("cuda:1")
    with pytest.raises(RuntimeError):
        torch.device("tpu")
    assert torch.is_tensor(t) and not torch.is_tensor([1])
    assert torch.is_floating_point(t) and not torch.is_floating_point(torch.tensor([1]))


# ---------------------------------------------------------------------------
# type strings, conversions and repr
# ---------------------------------------------------------------------------
@pytest.mark.cpu_only("CPU type strings and legacy constructors (cuda's: test_cuda.py)")
@pytest.mark.parametrize("dtype, name", [
    ("int64", "torch.LongTensor"), ("float32", "torch.FloatTensor"),
    ("float64", "torch.DoubleTensor"), ("float16", "torch.HalfTensor"),
    ("bool", "torch.BoolTensor"), ("int32", "torch.IntTensor"), ("int16", "torch.ShortTensor"),
    ("int8", "torch.CharTensor"), ("uint8", "torch.ByteTensor"),
])
def test_type_strings(dtype, name):
    t = torch.zeros(2, dtype=getattr(torch, dtype))
    assert t.type() == name
    assert torch.zeros(2).type(name).dtype is getattr(torch, dtype)


@pytest.mark.cpu_only("CPU type strings and legacy constructors (cuda's: test_cuda.py)")
def test_seed_type_examples_and_type_conversion():
    assert torch.tensor([1, 2]).type() == "torch.LongTensor"
    assert torch.tensor([1.0, 2.0]).type() == "torch.FloatTensor"
    assert torch.tensor(np.zeros(2, dtype=np.float64)).type() == "torch.DoubleTensor"
    t = torch.tensor([1.5, 2])
    assert t.type(torch.int64).tolist() == [1, 2]
    assert t.type("torch.DoubleTensor").dtype is torch.float64
    with pytest.raises(ValueError, match="invalid type"):
        t.type("torch.Foo")
    with pytest.raises(ValueError, match="invalid type"):
        t.type("torch.float64")


@pytest.mark.cpu_only("a CPU tensor's device and .to('cpu') (cuda's: test_cuda.py)")
def test_to_and_dtype_shortcuts():
    t = torch.tensor([1.5, -2.5])
    assert t.to(torch.float32) is t
    assert t.to(torch.int64).tolist() == [1, -2]
    assert t.double().dtype is torch.float64 and t.half().dtype is torch.float16
    assert t.long().dtype is torch.int64 and t.int().dtype is torch.int32
    assert t.bool().tolist() == [True, True] and t.float() is t
    assert t.to("cpu") is t and t.to(torch.zeros(1, dtype=torch.float64)).dtype is \
        torch.float64
    assert t.to(torch.float64, copy=False).dtype is torch.float64
    assert t.to(copy=True) is not t
    assert t.type_as(torch.tensor([1])).dtype is torch.int64


@pytest.mark.cpu_only("a CPU tensor's repr (cuda's adds device='cuda:0': test_cuda.py)")
@pytest.mark.parametrize("make, expected", [
    (lambda: torch.tensor([1.0, 2.0]), "tensor([1., 2.])"),
    (lambda: torch.tensor([1.0, 2.0], requires_grad=True), "tensor([1., 2.], requires_grad=True)"),
    (lambda: torch.tensor([1.0, 2.0], requires_grad=True) * 2,
     "tensor([2., 4.], grad_fn=<MulBackward0>)"),
    (lambda: torch.tensor([1.0, 2.0], requires_grad=True) + 2,
     "tensor([3., 4.], grad_fn=<AddBackward0>)"),
    (lambda: torch.tensor([1.0, 2.0], requires_grad=True).sum(),
     "tensor(3., grad_fn=<SumBackward0>)"),
    (lambda: torch.tensor([1.0, 2.0], requires_grad=True).mean(),
     "tensor(1.5000, grad_fn=<MeanBackward0>)"),
    (lambda: torch.tensor([1.0, 2.0], dtype=torch.float64), "tensor([1., 2.], dtype=minitorch.float64)"),
    (lambda: torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True),
     "tensor([1., 2.], dtype=minitorch.float64, requires_grad=True)"),
    (lambda: torch.tensor(2.0, dtype=torch.float64, requires_grad=True) * 2,
     "tensor(4., dtype=minitorch.float64, grad_fn=<MulBackward0>)"),
    (lambda: torch.tensor([1, 2], dtype=torch.int32), "tensor([1, 2], dtype=minitorch.int32)"),
    (lambda: torch.tensor([1, 2]), "tensor([1, 2])"),
    (lambda: torch.tensor([True, False]), "tensor([ True, False])"),
    (lambda: torch.tensor([1.0, 2.0], dtype=torch.float16), "tensor([1., 2.], dtype=minitorch.float16)"),
    (lambda: torch.tensor([], dtype=torch.int64), "tensor([], dtype=minitorch.int64)"),
    (lambda: torch.tensor([]), "tensor([])"),
    (lambda: torch.zeros(2, 0), "tensor([], size=(2, 0))"),
    (lambda: torch.tensor(3.5), "tensor(3.5000)"),
    (lambda: torch.tensor([[1.0, 2.0]], requires_grad=True).T,
     "tensor([[1.],\n        [2.]], grad_fn=<PermuteBackward0>)"),
    (lambda: torch.ones(2, requires_grad=True).detach(), "tensor([1., 1.])"),
    (lambda: torch.tensor([1.5, float("nan"), float("inf")]), "tensor([1.5000,    nan,    inf])"),
])
def test_repr(make, expected):
    assert repr(make()) == expected


@pytest.mark.cpu_only("a CPU tensor's repr (cuda's adds device='cuda:0': test_cuda.py)")
def test_repr_matches_pytorch_suffixes():
    real = pytest.importorskip("torch")
    cases = [
        lambda lib: lib.tensor([1.0, 2.0], requires_grad=True) * 2,
        lambda lib: lib.tensor([[1.0, 2.0]], dtype=lib.float64, requires_grad=True).sum(0),
        lambda lib: lib.tensor([1, 2], dtype=lib.int16),
        lambda lib: lib.tensor([], dtype=lib.bool),
        lambda lib: lib.zeros(2, 0, dtype=lib.float64),
        lambda lib: lib.tensor([2.0], dtype=lib.float16, requires_grad=True),
        lambda lib: lib.tensor(2.0, requires_grad=True).exp(),
    ]
    for case in cases:
        assert repr(case(torch)) == repr(case(real)).replace("torch.", "minitorch.")


def test_repr_of_big_tensor_is_summarised(default_device):
    text = repr(torch.arange(2000))
    assert "..." in text and text.startswith("tensor([   0,    1,    2,")


def test_deepcopy_and_pickle_rules(default_device):
    import copy
    import pickle
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = copy.deepcopy(a)
    assert b.requires_grad and b.tolist() == a.tolist() and b.data_ptr() != a.data_ptr()
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(a * 2)
    with pytest.raises(TypeError):
        pickle.dumps(a)


def test_warning_free_basic_usage(default_device):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = torch.arange(6.0).view(2, 3)
        (t * 2 + 1).sum(0).tolist()


@pytest.mark.cpu_only("CPU type strings and legacy constructors (cuda's: test_cuda.py)")
def test_legacy_tensor_types():
    """torch.FloatTensor and friends, as old code and the seeds use them."""
    a = torch.FloatTensor(2, 3)
    assert a.shape == (2, 3) and a.dtype is torch.float32
    b = torch.LongTensor([1, 2, 3])
    assert b.tolist() == [1, 2, 3] and b.type() == "torch.LongTensor"
    assert isinstance(torch.zeros(2), torch.FloatTensor)
    assert not isinstance(b, torch.FloatTensor) and isinstance(b, torch.LongTensor)
    assert isinstance(b, torch.Tensor) and not isinstance(torch.zeros(1), torch.cuda.FloatTensor)
    assert torch.DoubleTensor([[1, 2]]).dtype is torch.float64
    assert torch.ByteTensor([1]).dtype is torch.uint8 and torch.BoolTensor([1, 0]).tolist() == [
        True, False]
    assert repr(torch.FloatTensor) == "<class 'torch.FloatTensor'>"
    assert repr(torch.cuda.FloatTensor) == "<class 'torch.cuda.FloatTensor'>"
    assert b.type(torch.DoubleTensor).dtype is torch.float64
    assert b.type("torch.IntTensor").dtype is torch.int32
    with pytest.raises(RuntimeError, match="legacy constructor expects device type: cpu"):
        torch.FloatTensor(2, device="cuda")
    try:
        with pytest.warns(UserWarning, match="set_default_tensor_type.. is deprecated"):
            torch.set_default_tensor_type(torch.DoubleTensor)
        assert torch.zeros(1).dtype is torch.float64 and torch.tensor([1.0]).dtype is torch.float64
        with pytest.warns(UserWarning):
            torch.set_default_tensor_type("torch.FloatTensor")
        assert torch.zeros(1).dtype is torch.float32
        with pytest.warns(UserWarning), pytest.raises(TypeError, match="only floating-point"):
            torch.set_default_tensor_type(torch.LongTensor)
    finally:
        torch.set_default_dtype(torch.float32)
        torch.set_default_device("cpu")


def test_isclose_allclose_equal_match_pytorch(default_device):
    nan, inf = float("nan"), float("inf")
    a = torch.tensor([1.0, nan, inf, 2.0, -inf])
    b = torch.tensor([1.0 + 1e-6, nan, inf, 2.1, inf])
    assert torch.isclose(a, b).tolist() == [True, False, True, False, False]
    assert torch.isclose(a, b, equal_nan=True).tolist() == [True, True, True, False, False]
    assert a.isclose(b, atol=0.2).tolist() == [True, False, True, True, False]
    assert not torch.allclose(a, a) and torch.allclose(a, a, equal_nan=True)
    assert not torch.equal(a, a) and torch.equal(a[:1], a[:1]) and not torch.equal(a, a[:2])
    assert torch.isclose(torch.tensor([1, 2]), torch.tensor([1, 3])).tolist() == [True, False]
    assert torch.equal(torch.tensor([1, 2]), torch.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="Float did not match Double"):
        torch.isclose(torch.tensor([1.0]), torch.tensor([1.0], dtype=torch.float64))
    x = torch.randn(5, 4, dtype=torch.float64)
    np.testing.assert_array_equal(torch.isclose(x, x * (1 + 1e-7)).cpu().numpy(),
                                  np.isclose(x.cpu().numpy(), x.cpu().numpy() * (1 + 1e-7)))
