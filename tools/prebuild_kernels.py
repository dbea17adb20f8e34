"""Compile the kernels of the README's commands ahead of time, for the package to ship.

    python tools/prebuild_kernels.py           # build minitorch/backends/prebuilt/ again
    python tools/prebuild_kernels.py --check   # is it up to date with the code? (exit 1 if not)

The build runs the README's first commands (``minitorch train mnist`` for a
few steps, ``evaluate``, ``predict``, ``train xor``, ``train mnist --model
mlp``) in fresh processes that compile every kernel they need for the
baseline CPU of :mod:`minitorch.backends.prebuilt_kernels` (``NUMBA_CPU_NAME``),
into an empty cache filed by content, and packs that cache into
``kernels-<cpu>.tar.xz`` with a manifest: the versions it needs and, for each
kernel, its stamp.  ``--check`` recomputes the stamps from the code: a kernel
whose code changed since the build is reported (it would compile at first use
instead of loading; the test suite runs this check).
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
