"""Compile the kernels of the README's commands and of the op tests ahead of time, for the package.

    python tools/prebuild_kernels.py           # build minitorch/backends/prebuilt/ again (~8 min)
    python tools/prebuild_kernels.py --check   # is it up to date with the code? (exit 1 if not)

The build runs, in fresh processes that compile every kernel they need for the
baseline CPU of :mod:`minitorch.backends.prebuilt_kernels` (``NUMBA_CPU_NAME``)
into an empty cache filed by content:

* the README's first commands (``minitorch train mnist`` for an epoch,
  ``evaluate``, ``predict``, ``train mnist --model mlp``, ``train xor``) and a
  short tour of the basic ops (:data:`TOUR`): a newcomer's first minutes;
* the test suite (:data:`SUITE`), whose op tests call every op with every
  dtype and layout it takes: the catalogue of what users' programs call, so
  that the first call of any op loads its kernel instead of compiling it for
  seconds (and a fresh clone's CI compiles little);

and packs that cache into ``kernels-<cpu>.tar.xz`` with a manifest: the
versions it needs and, for each kernel, its stamp.  ``--check`` recomputes
the stamps from the code: a kernel whose code changed since the build is
reported (it would compile at first use instead of loading; the test suite
runs this check).
"""

from __future__ import annotations

import argparse
import importlib
import json
import lzma
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from minitorch.backends import kernel_cache, prebuilt_kernels  # noqa: E402

#: The commands whose kernels are shipped (``minitorch`` = ``python -m minitorch.cli``).
WORKLOAD = [
    # The README's first command (one epoch of it): 4,000 images, batches of 64, a test batch
    # of 1,000 (large enough for the parallel kernels) ...
    ["train", "mnist", "--epochs", "1", "--checkpoint", "{work}/lenet.mt", "--no-progress"],
    # ... a small run (CI's), whose batches stay under the parallel kernels' thresholds ...
    ["train", "mnist", "--limit", "512", "--test-limit", "200", "--epochs", "1",
     "--no-progress"],
    # ... and the README's other commands.
    ["evaluate", "{work}/lenet.mt"],
    ["predict", "{work}/lenet.mt", "{work}/digit.npy"],
    ["train", "mnist", "--model", "mlp", "--epochs", "1", "--no-progress"],
    ["train", "xor", "--epochs", "2", "--no-progress"],
]

#: What a newcomer types first (the seeds' examples): small tensors, float32 and float64,
#: integers and masks; views, arithmetic, reductions, matmul, autograd, indexing.
TOUR = """
import minitorch as torch
for dtype in (torch.float32, torch.float64):
    a = torch.randn(4, 5, dtype=dtype, requires_grad=True)
    b = torch.randn(5, 3, dtype=dtype)
    loss = ((a @ b).relu() * 2 + 1).sum() + (a.exp().log() - a.sigmoid() / 3).pow(2).mean()
    loss.backward()
    x = torch.randn(3, 4, dtype=dtype)
    y = x.t().contiguous() - x.t() * x.t() + 1.5
    x.sum(), x.sum(1, keepdim=True), x.mean(0), x.max(1), x.argmax(1), x.std(), y.abs().sqrt()
    x.softmax(-1), x.log_softmax(1), x.tanh(), x.clamp(-1, 1), x[x > 0], torch.where(x > 0, x, 0.0)
    x[:, 1:3] = 0
    torch.cat([x, x]), torch.stack([x, x]), x.view(12).sort(), x.cumsum(1), x.norm()
    torch.zeros(2, 3, dtype=dtype), torch.ones(2, dtype=dtype), torch.linspace(0, 1, 5)
i = torch.arange(10)
i * 2 + 1, i.sum(), i[i % 2 == 0], torch.tensor([1, 2, 3]) + 1, i.float().mean()
torch.tensor([[1., 2.], [3., 4.]]) @ torch.tensor([[1.], [1.]])
"""


#: The test suite, run into the build's cache (pytest, from the test extra).  Left out: the
#: files that compile no CPU kernel of the engine's (the docs, the PTX compile: CUDA kernels
#: are not cached for the CPU), the course's editions (students' code, compiled with bounds
#: checks), and the checks of installs and of this archive itself.
SUITE = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "tests",
         "--ignore=tests/test_course_edition.py", "--ignore=tests/test_docs.py",
         "--ignore=tests/test_cuda_ptx.py", "--ignore=tests/test_prebuilt_kernels.py",
         "--ignore=tests/test_bare_install.py"]


def build() -> None:
    with tempfile.TemporaryDirectory(prefix="minitorch-prebuild-") as tmp:
        cache, work = Path(tmp) / "kernels", Path(tmp) / "work"
        work.mkdir()
        import numpy as np
        digit = np.zeros((28, 28), np.uint8)
        digit[5:23, 13:16] = 255
        np.save(work / "digit.npy", digit)
        env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
        env.update({"NUMBA_CPU_NAME": prebuilt_kernels.CPU, "NUMBA_CPU_FEATURES": "",
                    prebuilt_kernels.SWITCH_ENV: "0",
                    kernel_cache.BY_CONTENT_ENV: str(cache)})
        for command in WORKLOAD:
            args = [a.format(work=work) for a in command]
            print("minitorch", " ".join(command), flush=True)
            subprocess.run([sys.executable, "-m", "minitorch.cli", *args], cwd=ROOT, env=env,
                           check=True, stdout=subprocess.DEVNULL)
        print("a tour of the basic ops", flush=True)
        subprocess.run([sys.executable, "-c", TOUR], cwd=ROOT, env=env, check=True)
        print("the test suite: python " + " ".join(SUITE), flush=True)
        subprocess.run([sys.executable, *SUITE], cwd=ROOT, env=env, check=True)
        files = sorted(p for p in cache.rglob("*") if p.suffix in (".nbi", ".nbc")
                       and "-boundscheck" not in p.name)
        kernels = sorted({_entry(p.relative_to(cache)) for p in files if p.suffix == ".nbi"})
        prebuilt_kernels.FOLDER.mkdir(exist_ok=True)
        # Sorted members, fixed metadata: the same kernels give the same archive.
        with lzma.open(prebuilt_kernels.ARCHIVE, "wb", preset=9 | lzma.PRESET_EXTREME) as xz, \
                tarfile.open(fileobj=xz, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for path in files:
                info = tar.gettarinfo(str(path), arcname=str(path.relative_to(cache)))
                info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
                info.mode = 0o644
                with open(path, "rb") as f:
                    tar.addfile(info, f)
    manifest = {"about": "Kernels compiled ahead of time by tools/prebuild_kernels.py; see "
                         "minitorch/backends/prebuilt_kernels.py.",
                "cpu": prebuilt_kernels.CPU, "versions": prebuilt_kernels.versions(),
                "kernels": [{"kernel": k, "stamp": s} for k, s in kernels]}
    prebuilt_kernels.MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    size = prebuilt_kernels.ARCHIVE.stat().st_size
    print(f"wrote {prebuilt_kernels.ARCHIVE.relative_to(ROOT)}: {len(kernels)} kernels, "
          f"{len(files)} files, {size / 1e6:.2f} MB")


def _entry(index: Path) -> tuple:
    """``("minitorch.backends.cpu.elementwise.unary_contiguous", stamp[:20])`` of an index
    file ``minitorch/backends/cpu/<stamp>/elementwise.unary_contiguous-any.py311.nbi``."""
    folder, stamp = index.parent.parent, index.parent.name
    name = index.name.split("-")[0]
    return ".".join([*folder.parts, name]), stamp


def stale() -> list:
    """The manifest's kernels whose code changed since the build (one line each)."""
    if not prebuilt_kernels.MANIFEST.is_file():
        return [f"{prebuilt_kernels.MANIFEST.relative_to(ROOT)} is missing"]
    manifest = json.loads(prebuilt_kernels.MANIFEST.read_text(encoding="utf-8"))
    problems = []
    for entry in manifest["kernels"]:
        if ".locals." in entry["kernel"]:
            # A function made inside another (an @overload's implementation): nothing
            # names it from outside.  Its stamp is its file's whole text, which the other
            # kernels of that file check too.
            continue
        module_name, _, name = entry["kernel"].rpartition(".")
        try:
            kernel = getattr(importlib.import_module(module_name), name)
        except (ImportError, AttributeError) as e:
            problems.append(f"{entry['kernel']}: not found ({e})")
            continue
        # The stamp the kernel was filed under when its module decorated it (a name the
        # kernel uses that was not defined yet then stamps it with its whole file).
        now = kernel._cache._impl.locator.get_source_stamp()[1][:20]
        if now != entry["stamp"]:
            problems.append(f"{entry['kernel']}: its code changed (stamp {entry['stamp']} "
                            f"-> {now})")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check the archive is current")
    if parser.parse_args().check:
        problems = stale()
        for line in problems:
            print(line)
        if problems:
            sys.exit(f"{len(problems)} prebuilt kernels are out of date: run "
                     "python tools/prebuild_kernels.py")
        print("the prebuilt kernels are up to date")
        return
    build()


if __name__ == "__main__":
    main()
