"""The course's pytest plugin (``tests/conftest.py`` loads it).

It adds two options:

* ``--task 2.1`` (repeatable) runs only the tests of those tasks;
* ``--course-report FILE`` writes each test's tasks and outcome as JSON.

It lives apart from :mod:`.grading` because it imports pytest, a development
tool: the ``minitorch`` command must start in an environment without it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from .grading import _STUB_MESSAGE

_STUB_LINE = re.compile(r"NotImplementedError: (?:tid=\[[^]]*\] ctaid=\[[^]]*\]: )?"
                        r"Task \d+\.\d+: [^\n]*")


# ---------------------------------------------------------------------------
# The pytest plugin
# ---------------------------------------------------------------------------
def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("minitorch course")
    group.addoption("--task", action="append", default=[], metavar="M.N",
                    help="Run only the tests of this course task (repeatable).")
    group.addoption("--course-report", default=None, metavar="FILE",
                    help="Write each test's course tasks and outcome to FILE (JSON).")


def task_ids(item: Any) -> list:
    """The tasks a test item grades (from its ``task`` markers)."""
    return [str(a) for mark in item.iter_markers("task") for a in mark.args]


def pytest_collection_modifyitems(config: Any, items: list) -> None:
    wanted = set(config.getoption("--task"))
    if not wanted:
        return
    keep, drop = [], []
    for item in items:
        (keep if wanted & set(task_ids(item)) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


class _Recorder:
    """Collects the outcome of every test (the first failing phase wins)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.results: dict = {}

    def pytest_runtest_logreport(self, report: Any) -> None:
        entry = self.results.setdefault(report.nodeid, {"outcome": "passed", "message": ""})
        if report.failed and entry["outcome"] == "passed":
            entry["outcome"] = "failed"
            crash = getattr(report.longrepr, "reprcrash", None)
            entry["message"] = crash.message if crash is not None else str(report.longrepr)[-2000:]
            # A stub that raises inside a parallel kernel reaches Python wrapped in a
            # SystemError; the stub's own line, further up the traceback, is the message.
            if not _STUB_MESSAGE.search(entry["message"]):
                stubs = _STUB_LINE.findall(str(report.longrepr))
                if stubs:
                    entry["message"] = stubs[-1]
        elif report.skipped and report.when in ("setup", "call") and entry["outcome"] == "passed":
            entry["outcome"] = "skipped"

    def pytest_collection_modifyitems(self, items: list) -> None:
        for item in items:
            self.results.setdefault(item.nodeid, {"outcome": "passed", "message": ""})[
                "tasks"] = task_ids(item)

    def pytest_sessionfinish(self) -> None:
        Path(self.path).write_text(json.dumps(self.results, indent=1))


@pytest.hookimpl(trylast=True)
def pytest_configure(config: Any) -> None:
    config.addinivalue_line("markers", "task(id): the course task (\"M.N\") a test grades")
    path = config.getoption("--course-report", default=None)
    if path and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_Recorder(path), "minitorch-course-recorder")
