"""``mpiexec -n 2 minitorch train ... --distributed``: rank 0 alone speaks and writes,
a run resumes, and two processes train exactly like one process: ``--batch-size``
is the global batch, each rank computing half of every batch."""

from __future__ import annotations

import re
import signal
import sys

from click.testing import CliRunner

import minitorch as torch
from minitorch.cli import main

try:
    from mpi_helpers import requires_mpi, run_mpi, start_mpi, stop, wait_for_stderr
except ImportError:
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from mpi_helpers import requires_mpi, run_mpi, start_mpi, stop, wait_for_stderr

# A small, quick run: the MLP on 256 digits, evaluated on 64.
RUN = ["train", "mnist", "--model", "mlp", "--limit", "256", "--test-limit", "64",
       "--no-progress", "--schedule", "none", "--seed", "3", "--batch-size", "64"]


def _metrics(text: str) -> list[tuple[str, ...]]:
    """(loss, train acc, test acc) of each "epoch ..." line."""
    return re.findall(r"^epoch.*loss (\S+)\s+train acc (\S+)\s+test acc (\S+)", text, re.M)


@requires_mpi
def test_two_processes_train_like_one_process_and_resume_after_ctrl_c(tmp_path):
    ckpt, ref = tmp_path / "ddp.mt", tmp_path / "one.mt"
    args = RUN + ["--epochs", "2", "--distributed", "--checkpoint", str(ckpt)]
    # The same two epochs in one process (this one), uninterrupted.  Run first: on a
    # fresh machine it compiles the kernels once, and the two ranks then load them
    # from Numba's disk cache instead of both compiling at once.
    one = CliRunner().invoke(main, RUN + ["--epochs", "2", "--checkpoint", str(ref)])
    assert one.exit_code == 0, one.output
    # Both ranks stop in the middle of epoch 2; a real Ctrl-C goes to mpiexec,
    # which forwards it to every rank: rank 0 saves, every rank exits.
    proc = start_mpi(2, "-m", "minitorch.cli", *args, "--pause-at", "batch:2:2", timeout=400)
    try:
        # Both ranks must be paused (each prints the line) before the Ctrl-C.
        err = wait_for_stderr(proc, "paused at batch:2:2", 2, 360)
        proc.send_signal(signal.SIGINT)
        out, rest = proc.communicate(timeout=60)
        err += rest
    finally:
        stop(proc)
    assert proc.returncode == 130, out + err
    assert out.count("epoch   1/2") == 1, out         # rank 0 alone prints
    assert "distributed: 2 processes over MPI" in out
    assert "interrupted: saved to" in out and "(epoch 2, batch 2)" in out

    resumed = run_mpi(2, "-m", "minitorch.cli", *args, "--resume", timeout=240)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "resumed from" in resumed.stdout and resumed.stdout.count("epoch   2/2") == 1
    assert "waiting for the gradient all-reduce" in resumed.stdout

    assert _metrics(out + resumed.stdout) == _metrics(one.output)
    a, b = torch.load(ckpt), torch.load(ref)
    assert [h["epoch"] for h in a["history"]] == [1, 2]
    for name, w in a["model"].items():
        assert float((w - b["model"][name]).abs().max()) < 1e-5, name


def test_distributed_without_mpi_says_how_to_install(monkeypatch):
    from minitorch.demos import distributed as demo
    monkeypatch.setattr(demo, "is_mpi_available", lambda: False)
    res = CliRunner().invoke(main, RUN + ["--distributed", "--epochs", "1"])
    assert res.exit_code == 1
    assert "--distributed needs mpi4py" in res.output
    assert "pip install 'minitorch[distributed]'" in res.output
    assert "Traceback" not in res.output


def test_a_batch_that_does_not_split_over_the_processes_is_refused(monkeypatch):
    # What mpiexec -n 3 tells rank 0; the check comes before MPI starts.
    from minitorch.demos import distributed as demo
    monkeypatch.setattr(demo, "is_mpi_available", lambda: True)
    monkeypatch.setenv("PMI_RANK", "0")
    monkeypatch.setenv("PMI_SIZE", "3")
    res = CliRunner().invoke(main, RUN + ["--distributed"])
    assert res.exit_code == 1
    assert "--batch-size 64 does not split evenly over 3 processes" in res.output
    assert "Traceback" not in res.output
    monkeypatch.setenv("PMI_RANK", "2")     # the other ranks leave quietly
    res = CliRunner().invoke(main, RUN + ["--distributed"])
    assert res.exit_code == 1 and res.output == ""
