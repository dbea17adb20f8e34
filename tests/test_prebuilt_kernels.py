"""The kernels shipped compiled (minitorch/backends/prebuilt_kernels.py).

A fresh machine loads the README's kernels from the package instead of
compiling them; a kernel whose code changed is never loaded from there; the
archive is up to date with the code (``tools/prebuild_kernels.py --check``);
a damaged or hostile archive is refused without writing outside its folder.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from minitorch.backends import kernel_cache, prebuilt_kernels

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("prebuild_kernels",
                                                  ROOT / "tools" / "prebuild_kernels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_prebuilt_kernels_are_up_to_date_with_the_code():
    problems = _tool().stale()
    assert not problems, (f"{len(problems)} prebuilt kernels are out of date: run "
                          "python tools/prebuild_kernels.py and commit minitorch/backends/"
                          "prebuilt/\n" + "\n".join(problems))
    manifest = json.loads(prebuilt_kernels.MANIFEST.read_text())
    assert manifest["cpu"] == prebuilt_kernels.CPU and len(manifest["kernels"]) >= 40
    # Small enough to ship in the package and the repository: the README's kernels and the
    # op tests' (every dtype and layout, matmul's packing kernels the largest) were 3.2 MB.
    assert prebuilt_kernels.ARCHIVE.stat().st_size < 4_000_000


# A LeNet training step and an evaluation, in a process with empty caches; then, for
# each kernel of the CPU backend, how many signatures it compiled and how many it loaded.
_FRESH = r"""
import json, sys
import minitorch as torch
from minitorch.backends import kernel_cache, prebuilt_kernels
from minitorch.demos.models import build_model
edited = sys.argv[1]
if edited:
    # As if the code of this kernel had changed: another stamp (kernel_cache's own test
    # edits real code; here the archive must not answer for a stamp it does not hold).
    module, _, name = edited.rpartition(".")
    import importlib
    locator = getattr(importlib.import_module(module), name)._cache._impl.locator
    locator._digest = "0" * 64
torch.manual_seed(0)
model = build_model("mnist", "lenet")
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x, y = torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))
loss = torch.nn.functional.cross_entropy(model(x), y)
loss.backward()
opt.step()
model.eval()
with torch.no_grad():
    model(torch.randn(200, 1, 28, 28)).argmax(1)
import minitorch.backends.cpu as cpu, pkgutil, importlib
compiled, loaded = {}, {}
for info in pkgutil.iter_modules(cpu.__path__):
    mod = importlib.import_module(f"minitorch.backends.cpu.{info.name}")
    for name, obj in vars(mod).items():
        stats = getattr(obj, "stats", None)
        if stats is None or getattr(obj, "__module__", None) != mod.__name__:
            continue
        key = f"{mod.__name__}.{name}"
        compiled[key] = sum(stats.cache_misses.values())
        loaded[key] = sum(stats.cache_hits.values())
print(json.dumps({"fits": prebuilt_kernels.folder() is not None, "compiled": compiled,
                  "loaded": loaded}))
"""


def _fresh_run(tmp_path: Path, edited: str = "") -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in (kernel_cache.BY_CONTENT_ENV, "NUMBA_CACHE_DIR", prebuilt_kernels.SWITCH_ENV)}
    env.update(NUMBA_CACHE_DIR=str(tmp_path / "numba"), MINITORCH_CACHE_DIR=str(tmp_path / "mt"),
               NUMBA_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", _FRESH, edited], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def archived() -> set:
    manifest = json.loads(prebuilt_kernels.MANIFEST.read_text())
    return {entry["kernel"] for entry in manifest["kernels"]}


def test_a_fresh_machine_loads_lenets_kernels_instead_of_compiling_them(tmp_path, archived):
    found = _fresh_run(tmp_path)
    if not found["fits"]:
        pytest.skip(f"this CPU lacks {prebuilt_kernels.CPU}'s features: nothing is loaded")
    loaded = {k for k, n in found["loaded"].items() if n}
    compiled = {k for k, n in found["compiled"].items() if n}
    assert len(loaded) >= 15, loaded
    assert not compiled & archived, f"compiled although shipped: {sorted(compiled & archived)}"
    # The archive was unpacked into the cache folder given, and nowhere else.
    assert list((tmp_path / "mt").glob(f"prebuilt-{prebuilt_kernels.CPU}-*"))


def test_a_kernel_whose_code_changed_compiles_instead_of_loading(tmp_path, archived):
    # The LeNet step's multiplications run in the zip kernel's twin for MUL (task 2.2's
    # code: a student's edit of arith_contiguous changes its stamp).
    kernel = "minitorch.backends.cpu.elementwise._mul_zip"
    assert kernel in archived
    found = _fresh_run(tmp_path, edited=kernel)
    if not found["fits"]:
        pytest.skip(f"this CPU lacks {prebuilt_kernels.CPU}'s features: nothing is loaded")
    assert found["compiled"][kernel] >= 1 and found["loaded"][kernel] == 0
    assert any(n for k, n in found["loaded"].items() if k != kernel)


def _archive(tmp_path: Path, members: list) -> Path:
    path = tmp_path / "kernels.tar.xz"
    with tarfile.open(path, "w:xz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


@pytest.mark.parametrize("hostile", ["escape", "link", "absolute", "garbage"])
def test_a_hostile_or_damaged_archive_is_refused_and_writes_nothing_outside(
        tmp_path, monkeypatch, hostile):
    if hostile == "garbage":
        archive = tmp_path / "kernels.tar.xz"
        archive.write_bytes(b"\xfd7zXZ\x00 not an archive" * 100)
    else:
        info = tarfile.TarInfo({"escape": "../../outside.txt", "link": "minitorch/x.nbi",
                                "absolute": "/tmp/outside-minitorch.txt"}[hostile])
        data = b"boom"
        info.size = len(data)
        if hostile == "link":
            info.type, info.linkname, info.size, data = tarfile.SYMTYPE, "/etc/passwd", 0, None
        archive = _archive(tmp_path, [(info, data)])
    manifest = tmp_path / "kernels.json"
    manifest.write_text(json.dumps({"versions": prebuilt_kernels.versions()}))
    monkeypatch.setattr(prebuilt_kernels, "ARCHIVE", archive)
    monkeypatch.setattr(prebuilt_kernels, "MANIFEST", manifest)
    monkeypatch.setattr(prebuilt_kernels, "cpu_fits", lambda: True)
    monkeypatch.setenv("MINITORCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(prebuilt_kernels.SWITCH_ENV, raising=False)
    prebuilt_kernels.folder.cache_clear()
    try:
        if hostile == "absolute":       # tarfile's data filter makes the path relative
            inside = prebuilt_kernels.folder()
            assert (inside / "tmp" / "outside-minitorch.txt").is_file()
        else:
            with pytest.warns(RuntimeWarning, match="prebuilt kernels not used"):
                assert prebuilt_kernels.folder() is None
            assert not list((tmp_path / "cache").glob("prebuilt-*"))
    finally:
        prebuilt_kernels.folder.cache_clear()
    assert not (tmp_path / "outside.txt").exists()
    assert not Path("/tmp/outside-minitorch.txt").exists()


def test_the_archive_is_not_used_with_other_versions_or_switched_off(tmp_path, monkeypatch):
    manifest = tmp_path / "kernels.json"
    manifest.write_text(json.dumps({"versions": {**prebuilt_kernels.versions(),
                                                 "numba": "0.0.1"}}))
    monkeypatch.setattr(prebuilt_kernels, "MANIFEST", manifest)
    monkeypatch.setenv("MINITORCH_CACHE_DIR", str(tmp_path / "cache"))
    prebuilt_kernels.folder.cache_clear()
    try:
        assert prebuilt_kernels.folder() is None
        monkeypatch.undo()
        monkeypatch.setenv(prebuilt_kernels.SWITCH_ENV, "0")
        prebuilt_kernels.folder.cache_clear()
        assert prebuilt_kernels.folder() is None
    finally:
        prebuilt_kernels.folder.cache_clear()


def test_a_named_archive_is_used_instead_of_the_packages(tmp_path, monkeypatch):
    """MINITORCH_PREBUILT_ARCHIVE (the course's CI gives editions the reference's): that
    archive and the manifest beside it; without the manifest, none."""
    info = tarfile.TarInfo("minitorch/backends/cpu/named.txt")
    info.size = 5
    archive = _archive(tmp_path, [(info, b"named")])
    named = tmp_path / "kernels-x.tar.xz"
    archive.rename(named)
    monkeypatch.setattr(prebuilt_kernels, "ARCHIVE", tmp_path / "absent.tar.xz")
    monkeypatch.setattr(prebuilt_kernels, "cpu_fits", lambda: True)
    monkeypatch.setenv("MINITORCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(prebuilt_kernels.SWITCH_ENV, raising=False)
    monkeypatch.setenv(prebuilt_kernels.ARCHIVE_ENV, str(named))
    prebuilt_kernels.folder.cache_clear()
    try:
        assert prebuilt_kernels.folder() is None          # no kernels-x.json beside it
        (tmp_path / "kernels-x.json").write_text(
            json.dumps({"versions": prebuilt_kernels.versions()}))
        prebuilt_kernels.folder.cache_clear()
        unpacked = prebuilt_kernels.folder()
        assert (unpacked / "minitorch/backends/cpu/named.txt").read_text() == "named"
        monkeypatch.delenv(prebuilt_kernels.ARCHIVE_ENV)
        prebuilt_kernels.folder.cache_clear()
        assert prebuilt_kernels.folder() is None          # the package's (here: absent)
    finally:
        prebuilt_kernels.folder.cache_clear()
