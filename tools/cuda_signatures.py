"""Record the signatures the CUDA kernels are launched with: ``tests/cuda_signatures.json``.

A CUDA kernel is compiled once per *signature*, the Numba types of the
arguments it is launched with.  The simulator never compiles anything, so
``tests/test_cuda_ptx.py`` compiles every signature of this list for real
GPUs (NVVM to PTX, then ``ptxas``), and every test run checks that no
kernel is launched with a signature the list lacks
(``minitorch/backends/cuda/signatures.py``).  After a change that launches a
kernel in a new way, record the list again and commit it::

    python tools/cuda_signatures.py            # runs `pytest -m cuda` on the simulator

It runs the CUDA tests (``pytest -m cuda``) with the simulator and
``MINITORCH_CUDA_SIGNATURES_RECORD`` set to a temporary folder, in which
every test process writes each new signature it launches; then it merges
them and writes the list, sorted.  ``--keep`` adds to the list instead of
replacing it (for a run restricted with extra pytest arguments, after
``--``); ``--check`` writes nothing and exits 1 when the list differs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIST = ROOT / "tests" / "cuda_signatures.json"

ABOUT = ("Every (kernel, argument types) the CUDA tests launch, recorded on the simulator by "
         "`python tools/cuda_signatures.py`; tests/test_cuda_ptx.py compiles each for real GPUs. "
         "Types are spelled as minitorch.backends.cuda.signatures.type_text writes them.")


def recorded(folder: Path) -> dict:
    """``{kernel: {signature tuple, ...}}`` from the ``*.jsonl`` files of ``folder``."""
    found: dict = {}
    for file in sorted(folder.glob("*.jsonl")):
        for line in file.read_text(encoding="utf-8").splitlines():
            if line.strip():
                name, sig = json.loads(line)
                found.setdefault(name, set()).add(tuple(sig))
    return found


def read(path: Path) -> dict:
    """The list at ``path`` as ``{kernel: {signature tuple, ...}}`` (empty if there is none)."""
    if not path.is_file():
        return {}
    kernels = json.loads(path.read_text(encoding="utf-8"))["kernels"]
    return {name: {tuple(sig) for sig in sigs} for name, sigs in kernels.items()}


def text(kernels: dict) -> str:
    """The list as JSON: sorted, one signature a line (a new one is a one-line diff)."""
    lines = ["{", f'  "about": {json.dumps(ABOUT)},', '  "kernels": {']
    names = sorted(kernels)
    for k, name in enumerate(names):
        sigs = sorted(kernels[name])
        lines.append(f"    {json.dumps(name)}: [")
        lines += [f"      {json.dumps(list(sig))}{',' if j < len(sigs) - 1 else ''}"
                  for j, sig in enumerate(sigs)]
        lines.append("    ]" + ("," if k < len(names) - 1 else ""))
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


def run_cuda_tests(folder: Path, pytest_args: list) -> int:
    """Run ``pytest -m cuda`` on the simulator, recording every launch into ``folder``."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", MINITORCH_CUDA_SIGNATURES="",
               MINITORCH_CUDA_SIGNATURES_RECORD=str(folder))
    command = [sys.executable, "-m", "pytest", "-q", "-m", "cuda", *pytest_args]
    print(" ".join(command), flush=True)
    return subprocess.run(command, cwd=ROOT, env=env).returncode


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true",
                        help="add to the list instead of replacing it")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if the list is not what the tests launch")
    parser.add_argument("--output", type=Path, default=LIST, help=f"the list (default {LIST})")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cuda-signatures-") as tmp:
        code = run_cuda_tests(Path(tmp), args.pytest_args)
        found = recorded(Path(tmp))
    failed = code not in (0, 5)          # 5: no test selected
    if failed:
        # Still written: a test that failed may have launched less than it would have, so a
        # signature may be missing, which the next test run reports by name.
        print(f"warning: the CUDA tests failed (pytest exit {code}): the list may miss what "
              "the failing tests would have launched", file=sys.stderr)
    if args.keep:
        for name, sigs in read(args.output).items():
            found.setdefault(name, set()).update(sigs)
    new = text(found)
    count = sum(len(s) for s in found.values())
    if args.check:
        same = args.output.is_file() and args.output.read_text(encoding="utf-8") == new
        print(f"{args.output}: {'up to date' if same else 'out of date'} "
              f"({len(found)} kernels, {count} signatures launched)")
        return 0 if same and not failed else 1
    args.output.write_text(new, encoding="utf-8")
    print(f"wrote {args.output}: {len(found)} kernels, {count} signatures")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
