"""Time minitorch's CUDA backend against PyTorch CUDA on the same GPU (the table of issue 5).

Run on a machine with an NVIDIA GPU, numba-cuda and PyTorch (CUDA build)::

    python tools/cuda_bench.py            # the full table
    python tools/cuda_bench.py --quick    # smaller sizes, fewer repeats
    python tools/cuda_bench.py --json     # machine-readable

Workloads, each timed as the median of several runs after a warm-up (which
also compiles minitorch's kernels), with the GPU synchronised around each
run:

* elementwise ``a + b`` on 2**26 float32: bandwidth in GB/s (3 arrays moved);
* matmul 4096 x 4096 float32, PyTorch with TF32 *off* (plain float32 FMA);
* conv2d forward + backward at LeNet's second layer (N=64, 6->16 channels, 5x5, 14x14);
* one MNIST epoch of LeNet (Adam, batch 64) on the 4,000 training digits
  shipped with minitorch, the same model and loop in both libraries.

The last column is minitorch's speed as a fraction of PyTorch's, and the
target the issue sets (elementwise >= 0.7, matmul >= 0.3, MNIST epoch
time <= 2x PyTorch's, i.e. speed >= 0.5).  Never run under the simulator.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
    sys.exit("cuda_bench.py times real GPUs: unset NUMBA_ENABLE_CUDASIM")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import minitorch  # noqa: E402

try:
    import torch  # noqa: E402
except ImportError:  # pragma: no cover
    sys.exit("cuda_bench.py compares with PyTorch: pip install torch (a CUDA build)")


def _median_time(fn, sync, repeats: int) -> float:
    fn()
    sync()
    times = []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _sync_mt():
    minitorch.cuda.synchronize()


def _sync_pt():
    torch.cuda.synchronize()


def bench_elementwise(quick: bool, repeats: int) -> dict:
    n = 2 ** (24 if quick else 26)
    a = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    ma, mb = minitorch.tensor(a, device="cuda"), minitorch.tensor(a, device="cuda")
    ta, tb = torch.tensor(a, device="cuda"), torch.tensor(a, device="cuda")
    t_mt = _median_time(lambda: ma + mb, _sync_mt, repeats)
    t_pt = _median_time(lambda: ta + tb, _sync_pt, repeats)
    gb = 3 * 4 * n / 1e9
    return {"workload": f"a + b, {n} float32", "minitorch_s": t_mt, "torch_s": t_pt,
            "minitorch_GBps": gb / t_mt, "torch_GBps": gb / t_pt, "target": 0.7}


def bench_matmul(quick: bool, repeats: int) -> dict:
    n = 1024 if quick else 4096
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    ma, mb = minitorch.tensor(a, device="cuda"), minitorch.tensor(b, device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    ta, tb = torch.tensor(a, device="cuda"), torch.tensor(b, device="cuda")
    t_mt = _median_time(lambda: ma @ mb, _sync_mt, repeats)
    t_pt = _median_time(lambda: ta @ tb, _sync_pt, repeats)
    err = float(np.abs((ma @ mb).cpu().numpy() - (ta @ tb).cpu().numpy()).max())
    flops = 2 * n ** 3
    return {"workload": f"matmul {n}x{n} float32 (TF32 off)", "minitorch_s": t_mt,
            "torch_s": t_pt, "minitorch_TFLOPs": flops / t_mt / 1e12,
            "torch_TFLOPs": flops / t_pt / 1e12, "max_abs_diff": err, "target": 0.3}


def bench_conv(quick: bool, repeats: int) -> dict:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((64, 6, 14, 14)).astype(np.float32)
    w = rng.standard_normal((16, 6, 5, 5)).astype(np.float32)
    mx = minitorch.tensor(x, device="cuda", requires_grad=True)
    mw = minitorch.tensor(w, device="cuda", requires_grad=True)
    tx = torch.tensor(x, device="cuda", requires_grad=True)
    tw = torch.tensor(w, device="cuda", requires_grad=True)

    def run_mt():
        minitorch.nn.functional.conv2d(mx, mw).sum().backward()

    def run_pt():
        torch.nn.functional.conv2d(tx, tw).sum().backward()
    t_mt = _median_time(run_mt, _sync_mt, repeats)
    t_pt = _median_time(run_pt, _sync_pt, repeats)
    return {"workload": "conv2d fwd+bwd (64,6,14,14) * (16,6,5,5)", "minitorch_s": t_mt,
            "torch_s": t_pt, "target": None}


def _lenet(nn):
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))


def _epoch(lib, model, opt, xs, ys, perm, batch: int, limit_batches: int | None = None):
    loss_fn = lib.nn.CrossEntropyLoss()
    n = xs.shape[0]
    for i, start in enumerate(range(0, n, batch)):
        if limit_batches is not None and i >= limit_batches:
            break
        idx = perm[start:start + batch]
        xb, yb = xs.index_select(0, idx), ys.index_select(0, idx)
        loss = loss_fn(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return float(loss.item())


def bench_mnist(quick: bool) -> dict:
    from minitorch.datasets.mnist import load_mnist_arrays
    images, labels = load_mnist_arrays(None, train=True)
    x = (images.astype(np.float32) / 255.0).reshape(-1, 1, 28, 28)
    y = labels.astype(np.int64)
    if quick:
        x, y = x[:1024], y[:1024]
    perm = np.random.default_rng(3).permutation(len(y))
    results = {}
    for name, lib, sync in (("minitorch", minitorch, _sync_mt), ("torch", torch, _sync_pt)):
        lib.manual_seed(0)
        model = _lenet(lib.nn).to("cuda")
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)
        xs, ys = lib.tensor(x, device="cuda"), lib.tensor(y, device="cuda")
        p = lib.tensor(perm, device="cuda")
        _epoch(lib, model, opt, xs, ys, p, 64, limit_batches=3)      # warm-up / compile
        sync()
        t0 = time.perf_counter()
        loss = _epoch(lib, model, opt, xs, ys, p, 64)
        sync()
        results[name] = (time.perf_counter() - t0, loss)
    return {"workload": f"MNIST epoch, LeNet, {len(y)} digits, batch 64, Adam",
            "minitorch_s": results["minitorch"][0], "torch_s": results["torch"][0],
            "minitorch_last_loss": results["minitorch"][1],
            "torch_last_loss": results["torch"][1], "target": 0.5}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", default=None, help="elementwise, matmul, conv or mnist")
    args = parser.parse_args()
    if not minitorch.cuda.is_available() or not torch.cuda.is_available():
        sys.exit("needs a CUDA GPU visible to both minitorch (numba-cuda) and PyTorch")
    repeats = 5 if args.quick else 20
    benches = {"elementwise": lambda: bench_elementwise(args.quick, repeats),
               "matmul": lambda: bench_matmul(args.quick, max(3, repeats // 4)),
               "conv": lambda: bench_conv(args.quick, repeats),
               "mnist": lambda: bench_mnist(args.quick)}
    rows = []
    for name, run in benches.items():
        if args.only and args.only != name:
            continue
        t0 = time.perf_counter()
        row = run()
        row["speed_vs_torch"] = row["torch_s"] / row["minitorch_s"]
        row["bench_seconds"] = time.perf_counter() - t0
        rows.append(row)
        if not args.json:
            print(f"  done: {row['workload']}", file=sys.stderr)
    report = {"gpu": torch.cuda.get_device_name(0), "minitorch_gpu":
              minitorch.cuda.get_device_name(0), "torch": torch.__version__, "rows": rows}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"GPU: {report['gpu']}   PyTorch {torch.__version__}")
    print(f"{'workload':<52} {'minitorch':>11} {'PyTorch':>11} {'speed':>7} {'target':>7}")
    for r in rows:
        target = "" if r["target"] is None else f">={r['target']}"
        print(f"{r['workload']:<52} {r['minitorch_s'] * 1e3:>9.3f}ms "
              f"{r['torch_s'] * 1e3:>9.3f}ms {r['speed_vs_torch']:>7.2f} {target:>7}")
        extra = {k: v for k, v in r.items() if k.endswith(("GBps", "TFLOPs", "diff", "loss"))}
        if extra:
            print("    " + ", ".join(f"{k} {v:.4g}" for k, v in extra.items()))


if __name__ == "__main__":
    main()
