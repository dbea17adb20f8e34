"""The course's pytest plugin (``tests/conftest.py`` loads it).

It adds three options:

* ``--task 2.1`` (repeatable) runs only the tests of those tasks;
* ``--course-report FILE`` logs every event of the session to FILE, one JSON
  object a line, written as it happens: each collected test with its tasks,
  each file that failed to import, each test's start, its reports and its
  end, and the session's end.  A process that dies mid-test leaves a log
  that says which test was running (:func:`.grading.run_tests` reads it);
* ``--course-skip FILE`` leaves out the tests listed in FILE (one node id a
  line): the grader's restart after a crash runs only what had not started.

Numba's typing errors are trimmed in the reports of a course run (see
:func:`trim_numba_error`): the student sees the kernel's line and what Numba
could not type, not 150 lines of compiler frames.

It lives apart from :mod:`.grading` because it imports pytest, a development
tool: the ``minitorch`` command must start in an environment without it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from .grading import _STUB_MESSAGE
from .numba_errors import trim_numba_error

_STUB_LINE = re.compile(r"NotImplementedError: (?:tid=\[[^]]*\] ctaid=\[[^]]*\]: )?"
                        r"Task \d+\.\d+: [^\n]*")


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("minitorch course")
    group.addoption("--task", action="append", default=[], metavar="M.N",
                    help="Run only the tests of this course task (repeatable).")
    group.addoption("--course-report", default=None, metavar="FILE",
                    help="Log each test's course tasks, start, outcome and end to FILE "
                         "(JSON lines).")
    group.addoption("--course-skip", default=None, metavar="FILE",
                    help="Leave out the tests whose node ids FILE lists (one a line).")


def task_ids(item: Any) -> list:
    """The tasks a test item grades (from its ``task`` markers)."""
    return [str(a) for mark in item.iter_markers("task") for a in mark.args]


def pytest_collection_modifyitems(config: Any, items: list) -> None:
    wanted = set(config.getoption("--task"))
    skip_file = config.getoption("--course-skip")
    skipped = set()
    if skip_file and Path(skip_file).is_file():
        skipped = set(Path(skip_file).read_text().splitlines())
    if not wanted and not skipped:
        return
    keep, drop = [], []
    for item in items:
        chosen = (not wanted or wanted & set(task_ids(item))) and item.nodeid not in skipped
        (keep if chosen else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _message(report: Any) -> str:
    """The line that says why a report failed (a stub's own line when there is one)."""
    if isinstance(report.longrepr, str):          # a trimmed Numba error: its first line
        return report.longrepr.splitlines()[0]
    crash = getattr(report.longrepr, "reprcrash", None)
    message = crash.message if crash is not None else str(report.longrepr)[-2000:]
    # A stub that raises inside a parallel kernel reaches Python wrapped in a
    # SystemError; the stub's own line, further up the traceback, is the message.
    if not _STUB_MESSAGE.search(message):
        stubs = _STUB_LINE.findall(str(report.longrepr))
        if stubs:
            message = stubs[-1]
    return message


class _EventLog:
    """Writes the session's events to a file, one JSON line each, flushed at once."""

    def __init__(self, path: str) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def write(self, **event: Any) -> None:
        os.write(self.fd, (json.dumps(event) + "\n").encode())

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list) -> None:
        for item in items:
            self.write(event="collected", nodeid=item.nodeid, tasks=task_ids(item))

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            crash = getattr(report.longrepr, "reprcrash", None)
            text = str(report.longrepr)
            last = [ln for ln in text.splitlines() if ln.startswith("E ")]
            message = (last[-1][1:].strip() if last else
                       crash.message if crash is not None else text[-500:])
            self.write(event="collect_error", path=report.nodeid, message=message)

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.write(event="start", nodeid=nodeid)

    def pytest_runtest_logreport(self, report: Any) -> None:
        outcome = report.outcome
        message = _message(report) if report.failed else ""
        if report.skipped:
            longrepr = report.longrepr
            message = str(longrepr[2]) if isinstance(longrepr, tuple) else str(longrepr)
        self.write(event="report", nodeid=report.nodeid, when=report.when, outcome=outcome,
                   message=message)

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        self.write(event="finish", nodeid=nodeid)

    def pytest_sessionfinish(self, exitstatus: Any) -> None:
        self.write(event="session_finish", exitstatus=int(exitstatus))


def _call_site(item: Any, excinfo: Any) -> str:
    """Where the test called the kernel that did not compile (the last frame of ours)."""
    root = Path(str(item.config.rootpath))
    for entry in reversed(list(excinfo.traceback)):
        path = Path(str(entry.path))
        if "site-packages" in path.parts or not path.is_relative_to(root):
            continue
        try:
            statement = str(entry.statement).strip()
        except Exception:                     # noqa: BLE001  (no source: say where only)
            statement = ""
        return f"  called from {path.relative_to(root).as_posix()}:{entry.lineno + 1}: {statement}"
    return f"  (in {item.nodeid})"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    outcome = yield
    report = outcome.get_result()
    if (call.excinfo is not None and report.failed
            and item.config.getoption("--course-report", default=None)):
        trimmed = trim_numba_error(call.excinfo.value)
        if trimmed is not None:
            report.longrepr = f"{trimmed}\n{_call_site(item, call.excinfo)}"


@pytest.hookimpl(trylast=True)
def pytest_configure(config: Any) -> None:
    config.addinivalue_line("markers", "task(id): the course task (\"M.N\") a test grades")
    path = config.getoption("--course-report", default=None)
    if path and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_EventLog(path), "minitorch-course-log")
