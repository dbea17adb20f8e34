"""The command line a newcomer meets (issue 12): train, evaluate, predict, their mistakes.

Every user mistake must end in one ``Error:`` line and a non-zero exit before
any work is done, never a traceback; an interrupted run must resume to the
same numbers as an uninterrupted one wherever it stopped.  The runs are tiny
(``--limit``, ``--test-limit``, few epochs); the trained checkpoints are
shared by module-scoped fixtures.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import struct
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import minitorch as torch
from minitorch.cli import main

pytestmark = pytest.mark.data

ROOT = Path(__file__).resolve().parents[1]
# The run every resume test compares with: 3 epochs of 3 batches, 100 test digits.
RUN = ["train", "mnist", "--model", "mlp", "--epochs", "3", "--limit", "192", "--test-limit",
       "100", "--no-progress"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def invoke(*args) -> "CliRunner.Result":
    return CliRunner().invoke(main, [str(a) for a in args])


def assert_user_error(res, *needles: str) -> str:
    """One ``Error:`` line, a non-zero exit, no traceback, and no training started."""
    assert isinstance(res.exception, SystemExit), res.output      # not a crash
    assert res.exit_code != 0, res.output
    assert "Traceback" not in res.output
    last = res.output.strip().splitlines()[-1]
    assert last.startswith("Error: "), res.output
    for needle in needles:
        assert needle in last, last
    assert "epoch " not in res.output and "saved to" not in res.output, res.output
    return last


def metrics(history: list) -> list:
    """A run's numbers without its timings."""
    timings = ("seconds", "images_per_second", "compile_seconds", "compile_cpu_seconds")
    return [{k: v for k, v in h.items() if k not in timings} for h in history]


@pytest.fixture(scope="module")
def mlp_run(tmp_path_factory):
    """The reference run: a finished 3-epoch MLP checkpoint and its history."""
    path = tmp_path_factory.mktemp("mlp") / "run.mt"
    res = invoke(*RUN, "--json", "--checkpoint", path)
    assert res.exit_code == 0, res.output
    return path, json.loads(res.stdout)["history"]


@pytest.fixture(scope="module")
def lenet_ckpt(tmp_path_factory):
    path = tmp_path_factory.mktemp("lenet") / "lenet.mt"
    res = invoke("train", "mnist", "--epochs", "1", "--limit", "128", "--test-limit", "64",
                 "--no-progress", "--checkpoint", path)
    assert res.exit_code == 0, res.output
    return path


@pytest.fixture(scope="module")
def xor_ckpt(tmp_path_factory):
    path = tmp_path_factory.mktemp("xor") / "xor.mt"
    res = invoke("train", "xor", "--epochs", "2", "--no-progress", "--checkpoint", path)
    assert res.exit_code == 0, res.output
    return path


def copy_of(path: Path, tmp_path: Path) -> Path:
    target = tmp_path / path.name
    shutil.copy(path, target)
    return target


# ---------------------------------------------------------------------------
# 2. exact resume at every interruption point
# ---------------------------------------------------------------------------
def test_sigint_to_the_command_in_a_first_batch_and_in_evaluation_resumes_exactly(mlp_run,
                                                                                 tmp_path):
    """A real Ctrl-C (SIGINT) to ``python cli.py train``, twice, then a resume to the end.

    The run stops in epoch 1's first batch (where people press Ctrl-C, during
    compilation), is resumed and stopped again while evaluating epoch 2.  The
    other points (middle and end of an epoch, ...) are interrupted with real
    SIGINTs in-process below, which is quicker than a process each.
    """
    _, reference = mlp_run
    ckpt = tmp_path / "part.mt"
    points = ["forward:1:0", "evaluate:2:1"]
    for i, point in enumerate(points):
        args = [sys.executable, str(ROOT / "cli.py"), *RUN, "--checkpoint", str(ckpt),
                "--pause-at", point] + (["--resume"] if i else [])
        proc = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        timer = threading.Timer(300, proc.kill)        # never hang the suite
        timer.start()
        try:
            seen = []
            for line in proc.stderr:
                seen.append(line)
                if line.startswith("paused at"):
                    break
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate()
        finally:
            timer.cancel()
        assert proc.returncode == 130, "".join(seen) + out + err
        assert "interrupted: saved to" in out and "Traceback" not in out + err, out + err
    state = torch.load(ckpt)
    assert (state["epoch"], state["phase"]) == (1, "evaluate")
    res = invoke(*RUN, "--json", "--checkpoint", ckpt, "--resume")
    assert res.exit_code == 0, res.output
    assert metrics(json.loads(res.stdout)["history"]) == metrics(reference)


MAIN_THREAD = threading.current_thread() is threading.main_thread()


@pytest.mark.skipif(not MAIN_THREAD, reason="signals reach the main thread only")
@pytest.mark.parametrize("point", ["epoch-start:1:0", "batch:1:0", "forward:1:1", "batch:1:2",
                                   "batch:1:3", "evaluate:1:1", "epoch-start:2:0",
                                   "forward:3:2", "batch:3:3", "evaluate:3:1"])
def test_sigint_anywhere_then_resume_gives_the_same_run(mlp_run, tmp_path, point):
    """Start, middle and end of epochs, and evaluation: a real SIGINT to this process.

    (``train`` installs its own SIGINT handler around the loop, so the signal
    stops the run, not pytest.)
    """
    from minitorch.demos.train import Interrupted, TrainConfig, train
    ref_path, reference = mlp_run
    where, epoch, batch = point.split(":")

    def pause(w, e, b):
        if (w, e, b) == (where, int(epoch), int(batch)):
            os.kill(os.getpid(), signal.SIGINT)     # handled before the next line runs
            raise AssertionError("SIGINT did not interrupt the run")

    cfg = TrainConfig(task="mnist", model="mlp", epochs=3, limit=192, test_limit=100,
                      lr=2e-3, checkpoint=str(tmp_path / "c.mt"))
    with pytest.raises(Interrupted):
        train(cfg, echo=lambda s: None, pause=pause)
    cfg.resume = True
    history = train(cfg, echo=lambda s: None)
    assert metrics(history) == metrics(reference)
    a, b = torch.load(ref_path)["model"], torch.load(tmp_path / "c.mt")["model"]
    for k in a:
        assert np.array_equal(a[k].numpy(), b[k].numpy()), k


def test_ctrl_c_without_checkpoint_or_before_training_says_nothing_was_saved(monkeypatch):
    from minitorch.demos import train as train_module
    lines = []

    def stop(w, e, b):
        raise KeyboardInterrupt
    with pytest.raises(train_module.Interrupted):
        train_module.train(train_module.TrainConfig(task="xor", model="mlp", epochs=1),
                           echo=lines.append, pause=stop)
    assert lines[-1].strip() == "interrupted (no --checkpoint given, nothing saved)"

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(train_module, "load_task_data", interrupted)
    res = invoke("train", "xor", "--no-progress")
    assert res.exit_code == 130 and "Traceback" not in res.output
    assert res.output.strip().endswith("interrupted before training started; nothing saved")


@pytest.mark.skipif(not MAIN_THREAD, reason="signals reach the main thread only")
def test_interrupt_guard_defers_sigint_to_the_end_of_a_step():
    from minitorch.demos.interrupt import InterruptGuard
    done = []
    with pytest.raises(KeyboardInterrupt):
        with InterruptGuard() as guard:
            with guard.hold():
                os.kill(os.getpid(), signal.SIGINT)    # a real Ctrl-C, mid-"step"
                done.append("rest of the step")
            done.append("after the step")
    assert done == ["rest of the step"]


# ---------------------------------------------------------------------------
# 3, 4. mistakes: one line, before any work, nothing lost
# ---------------------------------------------------------------------------
def test_unusable_checkpoints_given_to_resume(mlp_run, tmp_path):
    good = mlp_run[0].read_bytes()
    cases = {"empty.mt": b"", "truncated.mt": good[: len(good) // 2],
             "garbage.mt": os.urandom(300), "text.mt": b"not a checkpoint\n"}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    torch.save({"weights": torch.ones(3)}, tmp_path / "other.mt")     # minitorch, not ours
    expected = {"empty.mt": "is empty", "truncated.mt": "not a usable minitorch checkpoint",
                "garbage.mt": "not a usable minitorch checkpoint",
                "text.mt": "not a usable minitorch checkpoint",
                "other.mt": "not a checkpoint of minitorch train"}
    for name, message in expected.items():
        path = tmp_path / name
        before = path.read_bytes()
        assert_user_error(invoke("train", "--checkpoint", path, "--resume"), name, message)
        assert path.read_bytes() == before                 # nothing on disk is lost
    assert_user_error(invoke("train", "--checkpoint", tmp_path / "none.mt", "--resume"),
                      "no such file")


def test_resume_refuses_another_model_or_optimizer(mlp_run, tmp_path):
    ckpt = copy_of(mlp_run[0], tmp_path)
    before = ckpt.read_bytes()
    last = assert_user_error(invoke("train", "--model", "lenet", "--optimizer", "sgd",
                                    "--checkpoint", ckpt, "--resume"),
                             "--model mlp, not --model lenet", "--optimizer adam, not "
                             "--optimizer sgd", "Leave these options out")
    assert "--lr" not in last
    assert_user_error(invoke("train", "--lr", "0.1", "--checkpoint", ckpt, "--resume"),
                      "--lr 0.002, not --lr 0.1")
    assert_user_error(invoke("train", "--epochs", "2", "--checkpoint", ckpt, "--resume"),
                      "already trained 3 epochs")
    assert ckpt.read_bytes() == before


def test_weights_of_another_model_are_refused_in_one_line(lenet_ckpt, tmp_path):
    """A checkpoint whose config says mlp but whose weights are LeNet's."""
    state = torch.load(lenet_ckpt)
    state["config"]["model"] = "mlp"
    bad = tmp_path / "mixed.mt"
    torch.save(state, bad)
    assert_user_error(invoke("train", "--checkpoint", bad, "--resume"),
                      "weights do not fit the mlp model")
    assert_user_error(invoke("evaluate", bad), "weights do not fit the mlp model")


def test_output_paths_and_options_are_checked_before_training(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_file").write_text("x")
    fast = ["train", "xor", "--epochs", "1", "--no-progress"]
    assert_user_error(invoke(*fast, "--plot", "missing/curves.png"), "missing does not exist")
    assert_user_error(invoke(*fast, "--plot", "a_file/curves.png"), "is not a directory")
    assert_user_error(invoke(*fast, "--plot", "curves.txt"), "unknown image format .txt")
    assert_user_error(invoke(*fast, "--plot", "curves"), "no extension")
    if sys.platform.startswith("linux"):         # /sys refuses new files, even to root
        assert_user_error(invoke(*fast, "--plot", "/sys/curves.png"), "cannot write in /sys")
    assert_user_error(invoke(*fast, "--checkpoint", "missing/c.mt"),
                      "--checkpoint missing/c.mt", "does not exist")
    assert_user_error(invoke(*fast, "--device", "gpu"), "--device gpu: unknown device")
    assert_user_error(invoke(*fast, "--device", "cuda:99"), "--device cuda:99")
    assert_user_error(invoke(*fast, "--threads", "100000"), "at most")
    assert_user_error(invoke(*fast, "--model", "lenet"), "lenet is for mnist")
    assert_user_error(invoke("train", "mnist", "--data-dir", tmp_path), "not found",
                      "never downloads")
    assert sorted(os.listdir(tmp_path)) == ["a_file"]        # nothing written


def test_plot_without_matplotlib_fails_before_training(tmp_path, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("no matplotlib here")
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    assert_user_error(invoke("train", "xor", "--plot", tmp_path / "c.png"), "pip install")


def test_existing_checkpoint_is_not_overwritten_without_asking(mlp_run, tmp_path):
    ckpt = copy_of(mlp_run[0], tmp_path)
    before = ckpt.read_bytes()
    assert_user_error(invoke("train", "xor", "--checkpoint", ckpt), "already exists",
                      "--resume", "--overwrite")
    assert ckpt.read_bytes() == before
    res = invoke("train", "xor", "--epochs", "1", "--no-progress", "--checkpoint", ckpt,
                 "--overwrite")
    assert res.exit_code == 0, res.output
    assert torch.load(ckpt)["config"]["task"] == "xor"


def test_a_checkpoint_that_cannot_be_written_stops_in_one_line(xor_ckpt, tmp_path,
                                                               monkeypatch):
    ckpt = copy_of(xor_ckpt, tmp_path)
    before = ckpt.read_bytes()

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", disk_full)        # save's final, atomic rename
    res = invoke("train", "--checkpoint", ckpt, "--resume", "--epochs", "3", "--no-progress")
    assert isinstance(res.exception, SystemExit) and res.exit_code == 1, res.output
    assert res.output.strip().splitlines()[-1] == (
        f"Error: --checkpoint {ckpt}: cannot write it (No space left on device); the previous "
        "checkpoint there is unchanged")
    assert ckpt.read_bytes() == before and sorted(os.listdir(tmp_path)) == [ckpt.name]


# ---------------------------------------------------------------------------
# 5, 9. resume semantics and small surprises
# ---------------------------------------------------------------------------
def test_resume_continues_the_saved_configuration_and_extends_epochs(mlp_run, tmp_path):
    ckpt = copy_of(mlp_run[0], tmp_path)
    res = invoke("train", "--checkpoint", ckpt, "--resume", "--no-progress")
    assert res.exit_code == 0, res.output
    assert "has finished all 3 epochs" in res.output and "minitorch evaluate" in res.output
    res = invoke("train", "--checkpoint", ckpt, "--resume", "--epochs", "4", "--no-progress")
    assert res.exit_code == 0, res.output
    assert "continuing with the saved configuration" in res.output and "--model mlp" in \
        res.output
    assert "re-planned for 4 epochs" in res.output and "epoch   4/4" in res.output
    state = torch.load(ckpt)
    assert state["scheduler"]["T_max"] == 4 and len(state["history"]) == 4


def test_extended_cosine_schedule_never_climbs_back():
    from minitorch.demos.train import replan_cosine
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=1.0)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=3)
    for _ in range(3):
        sched.step()
    assert opt.param_groups[0]["lr"] == pytest.approx(0.0, abs=1e-12)
    replan_cosine(sched, 5)
    rates = [opt.param_groups[0]["lr"]]
    for _ in range(2):
        sched.step()
        rates.append(opt.param_groups[0]["lr"])
    # Epochs 3, 4 and 5 of a 5-epoch cosine: (1 + cos(pi k / 5)) / 2.
    assert rates == pytest.approx([(1 + math.cos(math.pi * k / 5)) / 2 for k in (3, 4, 5)],
                                  abs=1e-12)
    assert rates == sorted(rates, reverse=True)


def test_limit_cuts_only_the_training_set_and_says_so():
    res = invoke("train", "mnist", "--model", "mlp", "--epochs", "1", "--limit", "64",
                 "--no-progress")
    assert res.exit_code == 0, res.output
    assert "64 training samples (--limit 64) and 1000 test samples" in res.output


def test_spiral_defaults_learn_it():
    res = invoke("train", "spiral", "--json", "--no-progress")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["history"][-1]["test_acc"] >= 0.9


def test_plot_has_a_title_with_the_run_and_whole_epoch_ticks(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt
    from minitorch.demos.plots import plot_history, run_title
    figures = []
    monkeypatch.setattr(plt, "close", figures.append)
    history = [{"epoch": e, "loss": 1 / e, "test_loss": 1.1 / e, "train_acc": 0.5,
                "test_acc": 0.4} for e in (1, 2, 3)]
    config = {"task": "mnist", "model": "lenet", "optimizer": "adam", "lr": 0.002,
              "schedule": "cosine", "batch_size": 64, "seed": 0, "limit": None}
    plot_history(history, str(tmp_path / "c.png"), run_title(config))
    fig = figures[0]
    assert "mnist, lenet: adam lr 0.002" in fig._suptitle.get_text()
    for ax in fig.axes:
        ticks = [t for t in ax.get_xticks() if 1 <= t <= 3]
        assert ticks and all(float(t).is_integer() for t in ticks)
    plt.close(fig)
    assert (tmp_path / "c.png").read_bytes()[:8] == PNG_SIGNATURE


def test_train_plot_and_json_print_saved_to(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "curves.svg"
    res = invoke("train", "xor", "--epochs", "2", "--no-progress", "--plot", out)
    assert res.exit_code == 0, res.output
    assert f"saved to {out}" in res.output and out.read_text().lstrip().startswith("<?xml")


# ---------------------------------------------------------------------------
# 1. the first run
# ---------------------------------------------------------------------------
def test_first_slow_batch_says_it_is_compiling(monkeypatch):
    from minitorch.demos import progress, train
    monkeypatch.setattr(progress, "NOTICE_AFTER", 0.05)
    monkeypatch.setattr(progress.SlowStartNotice, "_started", set())
    real = train._batch_stats

    def slow_first(*args):
        slow_first.calls += 1
        if slow_first.calls == 1:
            import time
            time.sleep(0.5)                        # as if Numba were compiling
        return real(*args)
    slow_first.calls = 0
    monkeypatch.setattr(train, "_batch_stats", slow_first)
    res = invoke("train", "xor", "--epochs", "1", "--no-progress")
    assert res.exit_code == 0, res.output
    assert "compiling kernels (first run only" in res.output
    assert res.output.count("compiling kernels") == 1


class FakeClock:
    """``time.perf_counter`` that moves only when a test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_compile_time_is_reported_on_its_own_line_and_left_out_of_epoch_1(monkeypatch):
    """Epoch 1's seconds and img/s count the batches' work, not Numba's compiling.

    A fake clock makes it exact: every batch "works" for 1 s, and the first
    one also "compiles" for 30 s, announced through Numba's own events as a
    real compilation is (inside the compiler lock).
    """
    import time

    from numba.core import event

    from minitorch.demos import train
    clock = FakeClock()
    monkeypatch.setattr(time, "perf_counter", clock)
    real = train.forward_backward

    def step(*args):
        if step.calls == 0:
            with event.trigger_event("numba:compiler_lock"):
                with event.trigger_event("numba:compile"):
                    clock.now += 30.0
        step.calls += 1
        clock.now += 1.0
        return real(*args)
    step.calls = 0
    monkeypatch.setattr(train, "forward_backward", step)
    res = invoke("train", "xor", "--epochs", "2", "--batch-size", "100", "--no-progress",
                 "--json")
    assert res.exit_code == 0, res.output
    first, second = json.loads(res.stdout)["history"]
    assert first["seconds"] == pytest.approx(4.0)             # 400 points, 4 batches of 1 s
    assert first["images_per_second"] == pytest.approx(100.0)
    assert first["compile_seconds"] == pytest.approx(30.0)
    assert second["seconds"] == pytest.approx(4.0) and second["compile_seconds"] == 0
    lines = res.stderr.splitlines()
    report = [line for line in lines if line.startswith("compiled kernels in")]
    # (the fake compile used no CPU time, so the line also says the cores were busy)
    assert len(report) == 1 and report[0].startswith("compiled kernels in 30.0 s ("), lines
    assert report[0].endswith("first run on this machine; cached for later runs; not counted "
                              "in the epoch time)"), report
    # before epoch 1's line, and only once
    assert lines.index(report[0]) == lines.index(next(x for x in lines if x.startswith("epoch"))) - 1


def test_a_warm_run_reports_no_compile_and_a_cache_load_only_when_it_is_long(monkeypatch):
    from minitorch.demos.progress import compile_report
    assert compile_report(0.0, 0.2) is None
    assert compile_report(0.0, 2.0).startswith("loaded kernels from Numba's disk cache in 2.0 s")
    assert compile_report(5.0, 6.0).startswith("compiled kernels in 6.0 s")
    assert compile_report(5.0, 6.0, 5.5) == compile_report(5.0, 6.0)    # an idle machine
    assert "2.0 s of CPU time: other programs were using the cores" in compile_report(5.0, 6.0,
                                                                                      2.0)


def test_compile_clock_measures_nested_events_once():
    from numba.core import event

    from minitorch.demos.progress import CompileClock
    with CompileClock() as clock:
        with event.trigger_event("numba:compiler_lock"):       # a cache load: no compile
            pass
        with event.trigger_event("numba:compiler_lock"):
            with event.trigger_event("numba:compile"):
                with event.trigger_event("numba:compiler_lock"):   # a callee, nested
                    with event.trigger_event("numba:compile"):
                        before = clock.locked
    assert clock.compiling <= clock.locked and before <= clock.locked
    # after the block the clock no longer listens
    frozen = clock.locked
    with event.trigger_event("numba:compiler_lock"):
        import time
        time.sleep(0.01)
    assert clock.locked == frozen


def test_the_progress_bar_appears_after_the_first_batch(monkeypatch):
    """No ``0/3`` bar is left above the compiling notice: the bar starts at ``1/3``."""
    import io
    import sys as _sys

    from minitorch import cli

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True
    screen = Terminal()
    monkeypatch.setattr(_sys, "stderr", screen)
    with cli._progress_bar(range(3), 3, "epoch 1/1") as items:
        for i in items:
            if i == 0:
                screen.write("compiling kernels ...\n")       # what the notice prints
    text = screen.getvalue()
    assert text.startswith("compiling kernels ...\n"), text
    assert "0/3" not in text and "1/3" in text and "3/3" in text


def test_a_batch_larger_than_the_training_set_warns_and_trains_one_batch_an_epoch():
    res = invoke("train", "xor", "--epochs", "2", "--batch-size", "1000", "--no-progress")
    assert res.exit_code == 0, res.output
    warnings = [line for line in res.output.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: --batch-size 1000 is larger than the 400 training samples: "
                        "each epoch is one batch of 400 (as DataLoader gives), so 2 epochs make "
                        "only 2 steps of the optimizer; give a smaller --batch-size (default 64)"]
    assert res.output.count("epoch ") >= 2
    # with --limit the training set is what is left; a batch that fits says nothing
    res = invoke("train", "mnist", "--model", "mlp", "--epochs", "1", "--limit", "64",
                 "--test-limit", "10", "--batch-size", "64", "--no-progress")
    assert res.exit_code == 0 and "warning" not in res.output, res.output


@pytest.mark.parametrize("args, suggestion", [(["train", "minst"], "Did you mean mnist?"),
                                              (["train", "sprial"], "Did you mean spiral?"),
                                              (["train", "--optimizer", "adma"],
                                               "Did you mean adam?"),
                                              (["train", "--model", "lnet"],
                                               "Did you mean lenet?")])
def test_a_misspelled_choice_gets_a_suggestion(args, suggestion):
    res = invoke(*args)
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert res.output.strip().splitlines()[-1].endswith(suggestion), res.output


def test_a_choice_far_from_every_option_gets_no_suggestion():
    res = invoke("train", "imagenet")
    assert res.exit_code == 2, res.output
    assert "is not one of" in res.output and "Did you mean" not in res.output


def test_readme_docs_and_notice_quote_the_same_cold_compile_figure():
    """ONE figure for a first run's compile: the notice's, the README's, docs/training.md's."""
    from minitorch.demos.progress import COMPILE_CORES, COMPILE_SECONDS, compile_notice
    figure = f"about {COMPILE_SECONDS['lenet']} s"
    cores = f"{COMPILE_CORES} cores"
    assert figure in compile_notice("lenet") and cores in compile_notice("lenet")
    for doc in ("README.md", "docs/training.md"):
        text = " ".join((ROOT / doc).read_text().split())      # ignore line breaks
        assert figure in text and cores in text, doc
        # no other figure for it left behind
        for stale in ("about 15 s", "about 15 seconds", "about 30 s", "~30 s"):
            assert stale not in text, (doc, stale)


def test_eta_waits_for_the_first_batches():
    from minitorch.demos.progress import Eta
    times = iter([40.0, 40.25, 40.5, 40.75, 41.0]).__next__
    eta = Eta(total=100, warmup=3, clock=times)
    shown = []
    for _ in range(5):
        eta.step()
        shown.append(eta.text())
    # No estimate from the 40-second compiling batch; then 0.25 s a batch, 95 to go.
    assert shown[:3] == ["", "", ""] and shown[4] == "eta 00:24"


# ---------------------------------------------------------------------------
# 6, 7. evaluate and predict
# ---------------------------------------------------------------------------
def test_evaluate_reports_accuracy_loss_confusion_and_draws(lenet_ckpt, tmp_path):
    pytest.importorskip("matplotlib")
    wrong, maps = tmp_path / "wrong.png", tmp_path / "maps.png"
    res = invoke("evaluate", lenet_ckpt, "--misclassified", wrong, "--features", maps,
                 "--index", "3")
    assert res.exit_code == 0, res.output
    assert "accuracy" in res.output and "loss" in res.output
    assert "confusion matrix" in res.output and "true \\ predicted" in res.output
    assert f"saved to {wrong}" in res.output and f"saved to {maps}" in res.output
    assert wrong.read_bytes()[:8] == PNG_SIGNATURE and maps.read_bytes()[:8] == PNG_SIGNATURE
    res = invoke("evaluate", lenet_ckpt, "--json")
    report = json.loads(res.stdout)
    confusion = np.array(report["confusion_matrix"])
    assert confusion.shape == (10, 10) and confusion.sum() == report["n"] == 64
    assert report["accuracy"] == pytest.approx(np.trace(confusion) / 64)
    assert report["accuracy"] == pytest.approx(torch.load(lenet_ckpt)["history"][-1]["test_acc"])


def test_evaluate_mistakes(lenet_ckpt, mlp_run, tmp_path):
    assert_user_error(invoke("evaluate", tmp_path / "none.mt"), "no such file")
    assert_user_error(invoke("evaluate", mlp_run[0], "--features", tmp_path / "f.png"),
                      "no convolution layers")
    assert_user_error(invoke("evaluate", lenet_ckpt, "--features", tmp_path / "f.png",
                             "--index", "64"), "--index 64", "64 samples")
    assert_user_error(invoke("evaluate", lenet_ckpt, "--misclassified", tmp_path / "w.bmpx"),
                      "unknown image format")
    assert not list(tmp_path.iterdir())


def test_feature_hooks_capture_every_conv_layer_and_are_removed(lenet_ckpt):
    from minitorch.cli import _load_model
    from minitorch.demos.features import feature_maps
    state = torch.load(lenet_ckpt)
    model = _load_model(str(lenet_ckpt), state, "cpu")
    filters, maps = feature_maps(model, torch.rand(1, 28, 28))
    assert filters.shape == (6, 1, 5, 5)
    assert [(name, m.shape) for name, m in maps] == [("features.0", (6, 28, 28)),
                                                     ("features.3", (16, 10, 10))]
    assert all(not m._forward_hooks for m in model.modules())


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(
        ">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def write_png(path, rows: np.ndarray, width: int, colour: int, depth: int,
              palette: np.ndarray | None = None) -> None:
    """A PNG of packed ``rows`` (H, bytes) using filter ``y % 5`` on row ``y``: all five."""
    bpp = max(1, {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour] * depth // 8)
    prev = np.zeros(rows.shape[1], np.int64)
    out = b""
    for y, row in enumerate(rows.astype(np.int64)):
        kind = y % 5
        enc = []
        for i, v in enumerate(row):
            left = row[i - bpp] if i >= bpp else 0
            up, upleft = prev[i], (prev[i - bpp] if i >= bpp else 0)
            pred = [0, left, up, (left + up) // 2, _paeth(left, up, upleft)][kind]
            enc.append((v - pred) % 256)
        out += bytes([kind]) + bytes(enc)
        prev = row
    data = PNG_SIGNATURE + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, rows.shape[0],
                                                             depth, colour, 0, 0, 0))
    if palette is not None:
        data += _png_chunk(b"PLTE", palette.astype(np.uint8).tobytes())
    data += _png_chunk(b"IDAT", zlib.compress(out)) + _png_chunk(b"IEND", b"")
    Path(path).write_bytes(data)


def test_png_reader_decodes_every_filter_and_format(tmp_path):
    from minitorch.demos.png import read_png
    rng = np.random.default_rng(0)
    grey = rng.integers(0, 256, (7, 9), dtype=np.uint8)
    write_png(tmp_path / "g.png", grey, 9, 0, 8)
    assert np.allclose(read_png(tmp_path / "g.png"), grey / 255)
    rgba = rng.integers(0, 256, (6, 5, 4), dtype=np.uint8)
    write_png(tmp_path / "rgba.png", rgba.reshape(6, 20), 5, 6, 8)
    assert np.allclose(read_png(tmp_path / "rgba.png"), rgba / 255)
    rgb = rng.integers(0, 256, (5, 4, 3), dtype=np.uint8)
    write_png(tmp_path / "rgb.png", rgb.reshape(5, 12), 4, 2, 8)
    assert np.allclose(read_png(tmp_path / "rgb.png"), rgb / 255)
    deep = rng.integers(0, 65536, (5, 3), dtype=np.uint16)
    write_png(tmp_path / "g16.png", deep.astype(">u2").view(np.uint8).reshape(5, 6), 3, 0, 16)
    assert np.allclose(read_png(tmp_path / "g16.png"), deep / 65535)
    bits = rng.integers(0, 2, (5, 11), dtype=np.uint8)
    write_png(tmp_path / "g1.png", np.packbits(bits, axis=1), 11, 0, 1)
    assert np.array_equal(read_png(tmp_path / "g1.png"), bits.astype(np.float32))
    palette = np.array([[0, 0, 0], [255, 255, 255], [255, 0, 0], [0, 0, 255]])
    index = rng.integers(0, 4, (5, 6), dtype=np.uint8)
    packed = np.packbits(np.unpackbits(index[..., None], axis=2)[..., -2:].reshape(5, 12), 1)
    write_png(tmp_path / "p2.png", packed, 6, 3, 2, palette)
    assert np.allclose(read_png(tmp_path / "p2.png"), palette[index] / 255)
    (tmp_path / "bad.png").write_bytes(b"GIF89a")
    with pytest.raises(ValueError, match="not a PNG"):
        read_png(tmp_path / "bad.png")


def test_to_mnist_inverts_crops_and_centres_a_drawing():
    from minitorch.demos.predict import to_mnist
    page = np.ones((120, 90), np.float32)           # white paper
    page[20:100, 10:25] = 0.0                       # a thick black "1" off to the left
    digit = to_mnist(page)
    assert digit.shape == (28, 28) and digit.max() == pytest.approx(1.0)
    assert digit[0].max() == 0 and digit[:, 0].max() == 0          # dark background
    rows, cols = np.nonzero(digit > 0.5)
    assert rows.max() - rows.min() + 1 == pytest.approx(20, abs=1)  # 20-pixel box
    total = digit.sum()
    assert (digit.sum(1) * np.arange(28)).sum() / total == pytest.approx(13.5, abs=1)
    assert (digit.sum(0) * np.arange(28)).sum() / total == pytest.approx(13.5, abs=1)


def test_predict_png_npy_and_idx_agree_with_the_model(lenet_ckpt, tmp_path):
    from minitorch.cli import _load_model
    test = torch.datasets.MNIST(train=False)
    images = (test.data[:3, 0].numpy() * 255).round().astype(np.uint8)      # (3, 28, 28)
    write_png(tmp_path / "digit.png", images[0], 28, 0, 8)
    np.save(tmp_path / "digits.npy", images)
    header = struct.pack(">HBB", 0, 0x08, 3) + struct.pack(">3I", 3, 28, 28)
    (tmp_path / "digits-idx3-ubyte").write_bytes(header + images.tobytes())
    res = invoke("predict", lenet_ckpt, tmp_path / "digit.png", tmp_path / "digits.npy",
                 tmp_path / "digits-idx3-ubyte", "--top-k", "2", "--json")
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert len(rows) == 7 and all(len(r["top"]) == 2 for r in rows)
    model = _load_model(str(lenet_ckpt), torch.load(lenet_ckpt), "cpu")
    with torch.no_grad():
        expected = model(torch.from_numpy(images[:, None] / np.float32(255))).argmax(1).tolist()
    top1 = [r["top"][0]["class"] for r in rows]
    assert top1 == expected[:1] + expected + expected
    assert all(r["top"][0]["probability"] >= r["top"][1]["probability"] for r in rows)
    res = invoke("predict", lenet_ckpt, tmp_path / "digit.png")
    assert res.exit_code == 0 and "%" in res.output and "digit.png" in res.output


def test_predict_mistakes(lenet_ckpt, xor_ckpt, tmp_path):
    np.save(tmp_path / "odd.npy", np.zeros((3, 5)))
    (tmp_path / "x.jpg").write_bytes(b"\xff\xd8")
    labels = struct.pack(">HBB", 0, 0x08, 1) + struct.pack(">I", 2) + b"\x01\x02"
    (tmp_path / "labels-idx1-ubyte").write_bytes(labels)
    assert_user_error(invoke("predict", lenet_ckpt, tmp_path / "none.png"), "no such file")
    assert_user_error(invoke("predict", lenet_ckpt, tmp_path / "x.jpg"), "unsupported file type")
    assert_user_error(invoke("predict", lenet_ckpt, tmp_path / "odd.npy"), "got shape (3, 5)")
    assert_user_error(invoke("predict", lenet_ckpt, tmp_path / "labels-idx1-ubyte"), "labels")
    assert_user_error(invoke("predict", lenet_ckpt, tmp_path / "odd.npy", "-k", "11"),
                      "only 10 classes")
    assert_user_error(invoke("predict", xor_ckpt, tmp_path / "x.jpg"), "2-D points")


def test_predict_and_evaluate_a_2d_model(xor_ckpt, tmp_path):
    np.save(tmp_path / "points.npy", np.array([[0.5, 0.5], [-0.5, 0.5], [0.9, -0.8]]))
    res = invoke("predict", xor_ckpt, tmp_path / "points.npy", "--json")
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert len(rows) == 3
    assert all(sum(t["probability"] for t in r["top"]) == pytest.approx(1, abs=1e-5)
               for r in rows)
    res = invoke("evaluate", xor_ckpt)
    assert res.exit_code == 0 and "accuracy" in res.output


# ---------------------------------------------------------------------------
# 8. threads
# ---------------------------------------------------------------------------
def test_set_num_threads_like_pytorch():
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        assert torch.get_num_threads() == 1
        for bad, message in ((0, "positive integer"), (-2, "positive integer"),
                             ("2", "expects an int"), (2.0, "expects an int"),
                             (True, "expects an int")):
            with pytest.raises(RuntimeError, match=message):
                torch.set_num_threads(bad)
        with pytest.warns(UserWarning, match="NUMBA_NUM_THREADS"):
            torch.set_num_threads(10_000)
    finally:
        torch.set_num_threads(before)


def test_threads_option_on_train_and_bench():
    before = torch.get_num_threads()
    try:
        res = invoke("train", "xor", "--epochs", "1", "--no-progress", "--threads", "1")
        assert res.exit_code == 0, res.output
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
    assert_user_error(invoke("bench", "--threads", "100000", "--tiny"), "--threads 100000")


# ---------------------------------------------------------------------------
# 10. markers and the README
# ---------------------------------------------------------------------------
def _collect(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-n0", "-p",
                           "no:hypothesispytest", "--collect-only", "-q", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_misspelled_marker_fails_and_tensor_does_not_build_the_docs():
    res = _collect("-m", "tensr", "tests/test_docs.py")
    assert res.returncode != 0 and "tensr" in res.stdout + res.stderr
    res = _collect("-m", "tensor", "tests/test_docs.py")
    assert res.returncode == 5 and "deselected" in res.stdout      # 5: nothing selected
    assert "pytestmark = pytest.mark.docs" in (ROOT / "tests" / "test_docs.py").read_text()


def test_readme_says_how_to_build_docs_benchmark_and_compare_with_pytorch():
    readme = (ROOT / "README.md").read_text()
    for needle in ("sphinx", "minitorch bench", "asv run", "PyTorch", "-m docs",
                   "minitorch evaluate", "minitorch predict"):
        assert needle in readme, needle
    index = (ROOT / "docs" / "index.md").read_text()
    assert "cli-errors" in index
    assert "| " in (ROOT / "docs" / "cli-errors.md").read_text()
