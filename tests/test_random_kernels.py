"""Tests for the counter-based random generator (minitorch/backends/rng.py) and the CPU
random kernels around it (minitorch/backends/cpu/random.py).

Statistical checks use bounds of roughly 5+ standard deviations (or chi-square
critical values well beyond the 99.9% quantile): a correct generator passes
them essentially always, a biased one fails.  The streams are deterministic,
so a pass is a pass forever.
"""

from __future__ import annotations

from itertools import permutations

import numba
import numpy as np
import pytest

pytestmark = pytest.mark.tensor

from minitorch.backends.cpu import random as rk
from minitorch.backends.rng import multinomial_counters, normal_counters
# The generator's bodies (backends/rng.py), compiled for the CPU as the kernels use them.
from minitorch.backends.cpu.bodies import rng


N = 100_000

# --------------------------------------------------------------------------
# Pure-Python reference of the hash (Python ints masked to 64 bits).
# --------------------------------------------------------------------------

_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15


def _ref_mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _ref_random_bits(seed: int, counter: int) -> int:
    seed &= _MASK
    counter &= _MASK
    key = _ref_mix64((seed + _GAMMA) & _MASK)
    z = _ref_mix64((key + counter * _GAMMA) & _MASK)
    return _ref_mix64(z ^ key)


def _as_numba_int(x: int):
    """Python ints >= 2**63 must be passed as uint64 (Numba types ints as int64)."""
    return np.uint64(x) if x >= 2**63 else x


def _uniform(n, seed=0, offset=0, low=0.0, high=1.0, dtype=np.float64):
    out = np.empty(n, dtype=dtype)
    rk.fill_uniform(out, seed, offset, low, high)
    return out


def _normal(n, seed=0, offset=0, mean=0.0, std=1.0, dtype=np.float64):
    out = np.empty(n, dtype=dtype)
    rk.fill_normal(out, seed, offset, mean, std)
    return out


def _randint(n, low, high, seed=0, offset=0):
    out = np.empty(n, dtype=np.int64)
    rk.fill_randint(out, seed, offset, low, high)
    return out


# --------------------------------------------------------------------------
# The hash and its helpers.
# --------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 42, -1, 2**64 - 1, 2**63])
@pytest.mark.parametrize("counter", [0, 1, 2, 12345, 2**63, 2**64 - 1])
def test_random_bits_matches_reference(default_device, seed, counter):
    got = int(rng.random_bits(_as_numba_int(seed), _as_numba_int(counter)))
    assert got == _ref_random_bits(seed, counter)


def test_random_bits_golden_values(default_device):
    # Pinned so that other backends (CUDA) can check bit-identical streams.
    assert [_ref_random_bits(0, c) for c in range(3)] == [
        0x3B9D11EB55856BAF, 0x871B275E2C983E04, 0x3AF8798E18F8977E]
    assert [_ref_random_bits(42, c) for c in range(3)] == [
        0xE975338E8C6CFCA0, 0xC2097AB3308B052D, 0x53CC78FAED12C08F]
    assert int(rng.random_bits(0, 0)) == 0x3B9D11EB55856BAF


def test_negative_seed_wraps_like_uint64(default_device):
    assert int(rng.random_bits(-1, 5)) == int(rng.random_bits(np.uint64(2**64 - 1), 5))


def test_bit_balance(default_device):
    bits = np.array([_ref_random_bits(7, c) for c in range(2000)], dtype=np.uint64)
    ones = np.unpackbits(bits.view(np.uint8)).reshape(len(bits), 64).mean(axis=0)
    # each bit position is 1 about half the time (sd = 0.011)
    assert np.all(np.abs(ones - 0.5) < 0.06)


def test_mulhi64_matches_python_ints(default_device):
    numpy_rng = np.random.default_rng(0)
    values = [0, 1, 2**32 - 1, 2**32, 2**63, 2**64 - 1] + [
        int(x) for x in numpy_rng.integers(0, 2**64, size=20, dtype=np.uint64)]
    for a in values:
        for b in values[:10]:
            assert int(rng.mulhi64(np.uint64(a), np.uint64(b))) == (a * b) >> 64


def test_float_conversions_ranges(default_device):
    top = np.uint64(2**64 - 1)
    zero = np.uint64(0)
    assert rng.bits_to_float64(zero) == 0.0
    assert rng.bits_to_float64(top) == 1.0 - 2.0**-53
    assert rng.bits_to_float32(zero) == 0.0
    assert rng.bits_to_float32(top) == np.float32(1.0 - 2.0**-24)
    assert rng.bits_to_open_float64(zero) == 2.0**-53
    assert rng.bits_to_open_float64(top) == 1.0


def test_counter_helpers(default_device):
    assert [normal_counters(n) for n in range(5)] == [0, 2, 2, 4, 4]
    assert multinomial_counters(3, 5, 2, True) == 6
    assert multinomial_counters(3, 5, 2, False) == 15


# --------------------------------------------------------------------------
# Determinism and counter bookkeeping.
# --------------------------------------------------------------------------

def test_uniform_deterministic_and_offset_sensitive(default_device):
    a = _uniform(1000, seed=3, offset=7)
    b = _uniform(1000, seed=3, offset=7)
    np.testing.assert_array_equal(a, b)
    assert not np.any(a == _uniform(1000, seed=3, offset=8))
    assert not np.any(a == _uniform(1000, seed=4, offset=7))
    # counter-based: element i is exactly the hash of (seed, offset + i)
    expected = [(_ref_random_bits(3, 7 + i) >> 11) * 2.0**-53 for i in range(20)]
    np.testing.assert_array_equal(a[:20], expected)


def test_uniform_offset_continuation(default_device):
    whole = _uniform(20, seed=11, offset=100)
    parts = np.concatenate([_uniform(10, seed=11, offset=100),
                            _uniform(10, seed=11, offset=110)])
    np.testing.assert_array_equal(whole, parts)


def test_offset_wraps_around_2_pow_64(default_device):
    start = 2**64 - 3
    whole = _uniform(6, offset=np.uint64(start))
    parts = np.concatenate([_uniform(3, offset=np.uint64(start)), _uniform(3, offset=0)])
    np.testing.assert_array_equal(whole, parts)


def test_normal_offset_continuation(default_device):
    assert normal_counters(10) == 10
    whole = _normal(21, seed=5, offset=40)
    parts = np.concatenate([_normal(10, seed=5, offset=40),
                            _normal(11, seed=5, offset=40 + normal_counters(10))])
    np.testing.assert_array_equal(whole, parts)
    # with an odd length, the prefix still agrees
    np.testing.assert_array_equal(_normal(7, seed=5, offset=40), whole[:7])


def test_randint_and_bernoulli_offset_continuation(default_device):
    whole = _randint(30, -10, 10, seed=1, offset=9)
    parts = np.concatenate([_randint(12, -10, 10, seed=1, offset=9),
                            _randint(18, -10, 10, seed=1, offset=21)])
    np.testing.assert_array_equal(whole, parts)

    probs = np.full(30, 0.5)
    w = np.empty(30, dtype=np.bool_)
    rk.fill_bernoulli(w, probs, 2, 0)
    p1 = np.empty(12, dtype=np.bool_)
    p2 = np.empty(18, dtype=np.bool_)
    rk.fill_bernoulli(p1, probs[:12], 2, 0)
    rk.fill_bernoulli(p2, probs[12:], 2, 12)
    np.testing.assert_array_equal(w, np.concatenate([p1, p2]))


def test_results_do_not_depend_on_thread_count(default_device):
    before = numba.get_num_threads()
    a = _normal(10_001, seed=9)
    try:
        numba.set_num_threads(1)
        b = _normal(10_001, seed=9)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------
# Uniform.
# --------------------------------------------------------------------------

def test_uniform_statistics(default_device):
    u = _uniform(N, seed=123)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.005                 # sd 0.0009
    assert abs(u.var() - 1 / 12) < 0.002               # sd 0.0003
    counts = np.bincount((u * 10).astype(np.int64), minlength=10)
    chi2 = ((counts - N / 10) ** 2 / (N / 10)).sum()
    assert chi2 < 40                                   # df=9, 99.9% quantile 27.9


def test_uniform_low_high(default_device):
    x = _uniform(N, seed=1, low=-3.0, high=5.0)
    assert x.min() >= -3.0 and x.max() < 5.0
    assert abs(x.mean() - 1.0) < 0.04
    assert x.min() < -2.99 and x.max() > 4.99


def test_uniform_float32_uses_24_bits(default_device):
    u32 = _uniform(N, seed=8, dtype=np.float32)
    u64 = _uniform(N, seed=8, dtype=np.float64)
    assert u32.dtype == np.float32
    assert u32.min() >= 0.0 and u32.max() < 1.0
    scaled32 = u32.astype(np.float64) * 2.0**24
    np.testing.assert_array_equal(scaled32, np.floor(scaled32))  # multiples of 2**-24
    # same top bits: the float32 value is the float64 value truncated to 24 bits
    diff = u64 - u32.astype(np.float64)
    assert diff.min() >= 0.0 and diff.max() < 2.0**-24
    # float64 really uses more than 24 bits
    assert np.any(u64 * 2.0**24 != np.floor(u64 * 2.0**24))


# --------------------------------------------------------------------------
# Normal.
# --------------------------------------------------------------------------

def test_normal_statistics(default_device):
    z = _normal(N, seed=77)
    assert np.all(np.isfinite(z))
    assert abs(z.mean()) < 0.02                        # sd 0.003
    assert abs(z.var() - 1.0) < 0.03                   # sd 0.0045
    assert abs(np.mean(np.abs(z) < 1.0) - 0.682689) < 0.01
    assert abs(np.mean(z ** 3)) < 0.06                 # skewness, sd ~0.008
    assert abs(np.mean(z ** 4) - 3.0) < 0.15           # kurtosis, sd ~0.03
    # the cos and sin halves of each pair are uncorrelated
    assert abs(np.corrcoef(z[0::2], z[1::2])[0, 1]) < 0.03


def test_normal_mean_std_and_float32(default_device):
    x64 = _normal(N, seed=4, mean=3.0, std=2.0)
    assert abs(x64.mean() - 3.0) < 0.04
    assert abs(x64.std() - 2.0) < 0.04
    x32 = _normal(N, seed=4, mean=3.0, std=2.0, dtype=np.float32)
    assert x32.dtype == np.float32
    np.testing.assert_allclose(x32, x64.astype(np.float32), rtol=0, atol=0)


# --------------------------------------------------------------------------
# Randint.
# --------------------------------------------------------------------------

def test_randint_small_range_chi_square(default_device):
    x = _randint(N, -5, 5, seed=21)
    assert x.min() == -5 and x.max() == 4
    counts = np.bincount(x + 5, minlength=10)
    chi2 = ((counts - N / 10) ** 2 / (N / 10)).sum()
    assert chi2 < 40                                   # df=9, 99.9% quantile 27.9


def test_randint_single_value(default_device):
    np.testing.assert_array_equal(_randint(100, 7, 8), np.full(100, 7))


def test_randint_huge_ranges(default_device):
    x = _randint(20_000, 0, 2**63 - 1, seed=3)
    assert x.min() >= 0
    assert abs(np.mean(x >= 2**62) - 0.5) < 0.03
    y = _randint(20_000, -2**63, 2**63 - 1, seed=3)   # span 2**64 - 1
    assert abs(np.mean(y < 0) - 0.5) < 0.03
    assert abs(np.mean(y.astype(np.float64)) / 2.0**63) < 0.03


def test_randint_is_unbiased_for_awkward_span(default_device):
    # span = 3 * 2**61: multiply-shift *without* rejection would give the
    # residues mod 3 probabilities 3/8, 3/8, 2/8.  With rejection: 1/3 each.
    span = 3 * 2**61
    x = _randint(30_000, 0, span, seed=10)
    assert x.min() >= 0 and x.max() < span
    freq = np.bincount(x % 3, minlength=3) / len(x)
    assert np.all(np.abs(freq - 1 / 3) < 0.02)         # sd 0.0027


# --------------------------------------------------------------------------
# Bernoulli.
# --------------------------------------------------------------------------

@pytest.mark.parametrize("prob_dtype", [np.float32, np.float64])
def test_bernoulli_frequencies(default_device, prob_dtype):
    probs = np.repeat(np.array([0.0, 0.3, 1.0, 0.9], dtype=prob_dtype), N // 4)
    out = np.empty(len(probs), dtype=np.bool_)
    rk.fill_bernoulli(out, probs, 31, 0)
    parts = out.reshape(4, N // 4)
    assert not parts[0].any()
    assert abs(parts[1].mean() - 0.3) < 0.015          # sd 0.0029
    assert parts[2].all()
    assert abs(parts[3].mean() - 0.9) < 0.01           # sd 0.0019


def test_bernoulli_scalar(default_device):
    out = np.empty(N, dtype=np.bool_)
    rk.fill_bernoulli_scalar(out, 0.25, 5, 3)
    assert abs(out.mean() - 0.25) < 0.01
    same = np.empty(N, dtype=np.bool_)
    rk.fill_bernoulli(same, np.full(N, 0.25), 5, 3)
    np.testing.assert_array_equal(out, same)
    rk.fill_bernoulli_scalar(out, 0.0, 5, 3)
    assert not out.any()
    rk.fill_bernoulli_scalar(out, 1.0, 5, 3)
    assert out.all()


# --------------------------------------------------------------------------
# Randperm.
# --------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 10, 1000])
def test_randperm_is_a_permutation(default_device, n):
    out = np.empty(n, dtype=np.int64)
    rk.randperm(out, 17, 0)
    np.testing.assert_array_equal(np.sort(out), np.arange(n))


def test_randperm_deterministic(default_device):
    a = np.empty(50, dtype=np.int64)
    b = np.empty(50, dtype=np.int64)
    rk.randperm(a, 1, 2)
    rk.randperm(b, 1, 2)
    np.testing.assert_array_equal(a, b)
    rk.randperm(b, 1, 52)
    assert not np.array_equal(a, b)


def test_randperm_uniform_over_all_orders(default_device):
    n, trials = 4, 24_000
    index = {p: k for k, p in enumerate(permutations(range(n)))}
    counts = np.zeros(len(index))
    out = np.empty(n, dtype=np.int64)
    for t in range(trials):
        rk.randperm(out, 99, t * n)            # advance the offset by n each call
        counts[index[tuple(out)]] += 1
    expected = trials / len(index)
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 65                           # df=23, 99.9% quantile 49.7


# --------------------------------------------------------------------------
# Multinomial.
# --------------------------------------------------------------------------

def test_multinomial_with_replacement_frequencies(default_device):
    probs = np.array([[1.0, 2.0, 3.0, 4.0], [0.0, 5.0, 0.0, 5.0]])
    out = np.empty((2, N), dtype=np.int64)
    rk.multinomial(probs, N, True, out, 13, 0)
    f0 = np.bincount(out[0], minlength=4) / N
    np.testing.assert_allclose(f0, [0.1, 0.2, 0.3, 0.4], atol=0.01)   # sd <= 0.0016
    f1 = np.bincount(out[1], minlength=4) / N
    assert f1[0] == 0 and f1[2] == 0
    assert abs(f1[1] - 0.5) < 0.01


def test_multinomial_with_replacement_trailing_zero_weight(default_device):
    probs = np.array([[0.5, 0.5, 0.0]])
    out = np.empty((1, 10_000), dtype=np.int64)
    rk.multinomial(probs, 10_000, True, out, 0, 0)
    assert set(np.unique(out)) <= {0, 1}


def test_multinomial_without_replacement(default_device):
    p = np.array([1.0, 2.0, 3.0, 4.0]) / 10.0
    rows = 20_000
    probs = np.ascontiguousarray(np.tile(p * 7.0, (rows, 1)))   # unnormalised
    out = np.empty((rows, 2), dtype=np.int64)
    rk.multinomial(probs, 2, False, out, 55, 0)
    assert np.all(out[:, 0] != out[:, 1])
    first = np.bincount(out[:, 0], minlength=4) / rows
    np.testing.assert_allclose(first, p, atol=0.015)            # sd <= 0.0035
    # P(second = j) = sum_{i != j} p_i * p_j / (1 - p_i)  (draw i, remove it, draw j)
    second_expected = [sum(p[i] * p[j] / (1 - p[i]) for i in range(4) if i != j)
                       for j in range(4)]
    second = np.bincount(out[:, 1], minlength=4) / rows
    np.testing.assert_allclose(second, second_expected, atol=0.015)


def test_multinomial_without_replacement_full_draw_and_zeros(default_device):
    probs = np.array([[1.0, 1.0, 1.0, 1.0, 1.0], [0.0, 2.0, 0.0, 1.0, 3.0]])
    out = np.empty((2, 3), dtype=np.int64)
    for t in range(20):
        rk.multinomial(probs, 3, False, out, 8, t * 10)
        assert len(set(out[0])) == 3
        assert sorted(out[1]) == [1, 3, 4]     # only the positive-weight categories
    full = np.empty((1, 5), dtype=np.int64)
    rk.multinomial(probs[:1].copy(), 5, False, full, 8, 0)
    assert sorted(full[0]) == [0, 1, 2, 3, 4]


def test_multinomial_rows_use_separate_counters(default_device):
    probs = np.ones((3, 6))
    a = np.empty((3, 4), dtype=np.int64)
    rk.multinomial(probs, 4, True, a, 1, 0)
    # row r with replacement reads counters offset + r * num_samples + s
    row1 = np.empty((1, 4), dtype=np.int64)
    rk.multinomial(probs[:1].copy(), 4, True, row1, 1, 4)
    np.testing.assert_array_equal(a[1], row1[0])
    b = np.empty((3, 4), dtype=np.int64)
    rk.multinomial(probs, 4, False, b, 1, 0)
    row2 = np.empty((1, 4), dtype=np.int64)
    rk.multinomial(probs[:1].copy(), 4, False, row2, 1, 2 * 6)   # r * k
    np.testing.assert_array_equal(b[2], row2[0])


# --------------------------------------------------------------------------
# Empty outputs.
# --------------------------------------------------------------------------

def test_empty_outputs(default_device):
    for dtype in (np.float32, np.float64):
        assert _uniform(0, dtype=dtype).shape == (0,)
        assert _normal(0, dtype=dtype).shape == (0,)
    assert _randint(0, 0, 10).shape == (0,)
    b = np.empty(0, dtype=np.bool_)
    rk.fill_bernoulli(b, np.empty(0), 0, 0)
    rk.fill_bernoulli_scalar(b, 0.5, 0, 0)
    p = np.empty(0, dtype=np.int64)
    rk.randperm(p, 0, 0)
    m = np.empty((0, 3), dtype=np.int64)
    rk.multinomial(np.empty((0, 4)), 3, True, m, 0, 0)
    rk.multinomial(np.empty((0, 4)), 3, False, m, 0, 0)
    m0 = np.empty((2, 0), dtype=np.int64)
    rk.multinomial(np.ones((2, 4)), 0, True, m0, 0, 0)
    rk.multinomial(np.ones((2, 4)), 0, False, m0, 0, 0)
