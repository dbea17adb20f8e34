"""tools/gpu_check.sh, the one-command check for a machine with an NVIDIA GPU.

Its real work needs a GPU (see docs/cuda.md); here it is checked for what
any machine can see: it parses, it is shellcheck-clean, and without a GPU it
says so in one line and exits non-zero.  ~2 s (one import of minitorch and
numba.cuda in the script's own Python).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.cuda

SCRIPT = Path(__file__).resolve().parents[1] / "tools" / "gpu_check.sh"


def test_the_script_parses_and_is_shellcheck_clean():
    assert subprocess.run(["bash", "-n", str(SCRIPT)]).returncode == 0
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    done = subprocess.run(["shellcheck", str(SCRIPT)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


def test_without_a_gpu_it_says_why_in_one_line_and_fails(tmp_path):
    # NUMBA_DISABLE_CUDA=1 hides any GPU from numba-cuda: the same answer on every machine.
    env = dict(os.environ, PYTHON=sys.executable, NUMBA_DISABLE_CUDA="1")
    env.pop("OUT", None)
    done = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "report")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and not done.stderr, done.stdout + done.stderr
    assert lines[0].startswith("gpu_check: no NVIDIA GPU to check: Found no working NVIDIA "
                               "driver on your system (CUDA is disabled")
    # The one report file holds the same line.
    assert (tmp_path / "report" / "gpu_check.txt").read_text().splitlines() == lines
