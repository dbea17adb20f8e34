"""The course grader cannot be fooled: a test scores only if it ran and passed.

Each check runs the grader (:func:`minitorch.course.grading.grade`) on a tiny
fake edition in a temporary folder: its own ``tests/conftest.py`` (which
loads the course's pytest plugin, as the real one does) and task tests that
do what a broken submission does: fail, crash the process (``os._exit``),
loop for ever, fail to import, stop the session.  The engine is not copied
(the tests import nothing of it), so each run costs one Python start-up and
pytest's, a few seconds.  The parsers and checkers of the course tools
(wrong-solution files, stubs, Numba error trimming, the record) are checked
with the inputs they must refuse too.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from minitorch.course.grading import grade, gradescope_results, syntax_errors
from minitorch.course.numba_errors import trim_numba_error
from minitorch.course.record import (EDITION_FILE, CourseTask, RecordError, read_record,
                                     task_test_files, write_record)
from minitorch.course.wrong import WrongFileError, parse_wrong_file, put_in_place

pytestmark = pytest.mark.data

CONFTEST = '''
from hypothesis import settings
settings.register_profile("course-edition", deadline=None, print_blob=False)
settings.register_profile("course", deadline=None, print_blob=False)
pytest_plugins = ["minitorch.course.pytest_plugin"]
'''


def _edition(tmp_path: Path, files: dict, conftest: str = CONFTEST) -> list:
    """A fake edition: ``files`` ({name: source} under tests/course), a record of the tasks
    their marks name; returns the recorded tasks."""
    (tmp_path / "tests" / "course").mkdir(parents=True)
    (tmp_path / "tests" / "conftest.py").write_text(conftest)
    for name, source in files.items():
        (tmp_path / "tests" / "course" / name).write_text(textwrap.dedent(source))
    tests = task_test_files(tmp_path)
    tasks = [CourseTask(t, 9, f"task {t}", "minitorch/nothing.py", "f", f) for t, f in
             sorted(tests.items())]
    write_record(tmp_path, tasks, [9])
    return read_record(tmp_path)


def _scores(result) -> dict:
    return {s.id: (s.passed, s.total, s.points, s.first_failure) for s in result.scores}


def test_crashes_time_outs_and_files_that_do_not_import_cost_their_own_tasks_only(tmp_path):
    tasks = _edition(tmp_path, {
        "test_m9_a.py": '''
            import os, pytest

            @pytest.mark.task("9.1")
            def test_passes(): assert 1 + 1 == 2

            @pytest.mark.task("9.1")
            def test_passes_too(): pass

            @pytest.mark.task("9.2")
            def test_fails(): assert 1 == 2

            @pytest.mark.task("9.2")
            def test_passes_but_its_teardown_fails(request):
                request.addfinalizer(lambda: 1 / 0)

            @pytest.mark.task("9.3")
            def test_crashes(): os._exit(3)

            @pytest.mark.task("9.3")
            def test_after_the_crash(): pass

            @pytest.mark.task("9.4")
            def test_loops_for_ever():
                while True:
                    pass

            @pytest.mark.task("9.6")
            def test_after_the_loop(): pass
        ''',
        "test_m9_b.py": '''
            import pytest
            import a_module_that_does_not_exist

            @pytest.mark.task("9.5")
            def test_never_collected(): pass
        ''',
        "test_m9_c.py": '''
            import pytest

            @pytest.mark.task("9.7")
            def test_in_a_later_file(): pass
        ''',
    })
    assert [t.id for t in tasks] == ["9.1", "9.2", "9.3", "9.4", "9.5", "9.6", "9.7"]
    result = grade(tmp_path, tasks, timeout=4)
    got = _scores(result)
    assert got["9.1"][:3] == (2, 2, 10.0)
    assert got["9.2"][:3] == (0, 2, 0.0)
    assert got["9.3"][:3] == (1, 2, 5.0) and "crashed the test process" in got["9.3"][3]
    assert got["9.4"][:3] == (0, 1, 0.0) and "took longer than 4 s" in got["9.4"][3]
    assert got["9.5"][:3] == (0, 1, 0.0) and "does not import" in got["9.5"][3]
    assert got["9.6"][:3] == (1, 1, 10.0)       # the tests after a crash and a time-out ran
    assert got["9.7"][:3] == (1, 1, 10.0)
    assert len(result.run.exit_codes) == 3      # the first process, and one after each death
    assert any("test_m9_b.py does not import" in w and "a_module_that_does_not_exist" in w
               for w in result.warnings)
    results = gradescope_results(result)
    assert results["score"] == 35.0
    assert [t["number"] for t in results["tests"]] == [t.id for t in tasks]
    assert all(t["max_score"] == 10.0 for t in results["tests"])
    assert [t["status"] for t in results["tests"]] == ["passed", "failed", "failed", "failed",
                                                       "failed", "passed", "passed"]
    json.dumps(results)


def test_a_session_that_stops_early_scores_only_what_ran_and_passed(tmp_path):
    tasks = _edition(tmp_path, {
        "test_m9_a.py": '''
            import pytest

            @pytest.mark.task("9.1")
            def test_passes(): pass

            @pytest.mark.task("9.2")
            def test_stops_the_session(): pytest.exit("the student's code stopped pytest")

            @pytest.mark.task("9.3")
            def test_never_runs(): pass
        '''})
    result = grade(tmp_path, tasks)
    got = _scores(result)
    assert got["9.1"][:3] == (1, 1, 10.0)
    assert got["9.2"][2] == 0.0 and got["9.3"][2] == 0.0
    assert "did not run" in got["9.3"][3]
    assert result.run.exit_codes == [2]
    assert result.warnings and "pytest stopped early (exit status 2)" in result.warnings[0]


def test_a_grade_keeps_the_same_messages_whatever_the_traceback_style(tmp_path):
    """``course grade`` and ``status`` (no one reads pytest's output) run with
    ``--tb=native``, ``course test`` with ``short``: each failure's message, the
    line a grade keeps, must not depend on it (stubs deep in a helper, a stub
    wrapped in another error, assertions, Hypothesis' falsifying examples)."""
    (tmp_path / "helper.py").write_text(textwrap.dedent('''
        def stub():
            raise NotImplementedError("Task 9.1: fill in the helper.")

        def deep(n):
            return stub() if n == 0 else deep(n - 1)

        def wrapped():
            try:
                stub()
            except NotImplementedError as e:
                raise SystemError("a kernel failed") from e
    '''))
    tasks = _edition(tmp_path, {
        "test_m9_a.py": '''
            import pytest
            from hypothesis import given, strategies as st
            import helper

            @pytest.mark.task("9.1")
            def test_a_stub_five_frames_down(): helper.deep(4)

            @pytest.mark.task("9.1")
            def test_a_wrapped_stub(): helper.wrapped()

            @pytest.mark.task("9.2")
            def test_an_assertion(): assert [1, 2] == [1, 3]

            @pytest.mark.task("9.2")
            @given(st.integers(0, 10))
            def test_a_falsified_property(n): assert n < 5
        '''})
    quiet = grade(tmp_path, tasks)
    shown = []
    echoed = grade(tmp_path, tasks, echo=shown.append)
    assert any("test_an_assertion" in line for line in shown)
    messages = {n: t["message"] for n, t in quiet.run.tests.items()}
    assert messages == {n: t["message"] for n, t in echoed.run.tests.items()}
    assert len(messages) == 4 and all(messages.values()), messages
    by_name = {n.split("::")[-1]: m for n, m in messages.items()}
    assert by_name["test_a_stub_five_frames_down"].startswith("NotImplementedError: Task 9.1")
    assert by_name["test_a_wrapped_stub"].startswith("NotImplementedError: Task 9.1")


def test_a_conftest_that_does_not_import_scores_nothing(tmp_path):
    tasks = _edition(tmp_path, {
        "test_m9_a.py": '''
            import pytest

            @pytest.mark.task("9.1")
            def test_passes(): pass
        '''}, conftest=CONFTEST + "\nimport a_module_that_does_not_exist\n")
    result = grade(tmp_path, tasks)
    assert _scores(result)["9.1"][2] == 0.0
    assert result.run.exit_codes[-1] not in (0, 1)
    assert any("a_module_that_does_not_exist" in w for w in result.warnings)


def test_a_syntax_error_is_said_in_one_line_first_and_scores_nothing(tmp_path):
    tasks = _edition(tmp_path, {
        "helpers_m9.py": "def broken(:\n    pass\n",
        "test_m9_a.py": '''
            import pytest
            from helpers_m9 import broken

            @pytest.mark.task("9.1")
            def test_uses_the_broken_file(): pass
        ''',
        "test_m9_b.py": '''
            import pytest

            @pytest.mark.task("9.2")
            def test_does_not(): pass
        '''})
    (tmp_path / "tests" / "course" / "conftest.py").write_text(
        "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parent))\n")
    result = grade(tmp_path, tasks)
    assert result.warnings[0].startswith("tests/course/helpers_m9.py:1: SyntaxError: ")
    assert _scores(result)["9.1"][2] == 0.0 and _scores(result)["9.2"][2] == 10.0
    assert syntax_errors(tmp_path) == [result.warnings[0].split(" (the tests")[0]]


# ---------------------------------------------------------------------------
# The record, the wrong-solution files, the stubs, Numba's errors
# ---------------------------------------------------------------------------
def test_a_broken_record_is_one_clear_error(tmp_path):
    (tmp_path / EDITION_FILE).write_text('{"tasks": [{"id": "1.1"}]}')
    with pytest.raises(RecordError, match="not a course edition record"):
        read_record(tmp_path)
    (tmp_path / "tests" / "course").mkdir(parents=True)
    for name in ("test_m1_a.py", "test_m1_b.py"):
        (tmp_path / "tests" / "course" / name).write_text(
            "import pytest\n@pytest.mark.task('1.1')\ndef test_x(): pass\n")
    with pytest.raises(RecordError, match="task 1.1 has tests in two files"):
        task_test_files(tmp_path)


WRONG_OK = """# Wrong solutions for task 2.2 (each must be rejected by the task's tests).

### WRONG overrun: one past the end
for i in range(out.shape[0] + 1):
    out[i] = a[i]
### END WRONG

### WRONG returns early
return out
### END WRONG
"""


@pytest.mark.parametrize("text, message", [
    ("### WRONG x\nreturn 1\n", "has no '### END WRONG'"),
    ("return 1\n### WRONG x\nreturn 1\n### END WRONG\n", "code outside"),
    ("### WRONG x\n### END WRONG\n", "empty body"),
    ("### WRONG x\n    return 1\n### END WRONG\n", "zero indentation"),
    ("### WRONG x\nfor i in range(:\n### END WRONG\n", "not valid Python"),
    ("### WRONG x\nreturn 1\n### WRONG y\nreturn 2\n### END WRONG\n", "before the next block"),
    ("### END WRONG\n", "without a '### WRONG name'"),
])
def test_wrong_solution_files_are_parsed_and_malformed_ones_refused(tmp_path, text, message):
    good = tmp_path / "task_2_2.txt"
    good.write_text(WRONG_OK)
    solutions = parse_wrong_file(good)
    assert [(s.task, s.name) for s in solutions] == [("2.2", "overrun: one past the end"),
                                                     ("2.2", "returns early")]
    assert solutions[0].body.startswith("for i in") and solutions[0].where.endswith(":3")
    bad = tmp_path / "task_2_3.txt"
    bad.write_text(text)
    with pytest.raises(WrongFileError, match=message):
        parse_wrong_file(bad)
    with pytest.raises(WrongFileError, match="named task_M_N.txt"):
        parse_wrong_file(tmp_path / "wrong.txt")


def test_a_wrong_body_replaces_the_stub_at_its_indentation():
    source = ('def f(out, a):\n    # Task 2.2: zip.\n'
              '    raise NotImplementedError("Task 2.2: zip.")\n\n\ndef g():\n    pass\n')
    placed = put_in_place(source, "2.2", "for i in range(3):\n    out[i] = a[i]\n\nreturn out")
    assert placed == ('def f(out, a):\n    # Task 2.2: zip.\n    for i in range(3):\n'
                      '        out[i] = a[i]\n\n    return out\n\n\ndef g():\n    pass\n')
    compile(placed, "x", "exec")
    with pytest.raises(ValueError, match="stub of task 2.3 is missing"):
        put_in_place(source, "2.3", "return 1")
    with pytest.raises(ValueError, match="there twice"):
        put_in_place(source + source, "2.2", "return 1")


def test_numba_typing_errors_are_trimmed_to_the_kernel_line():
    np = pytest.importorskip("numpy")
    from numba import njit

    @njit
    def kernel(a, out):
        for i in range(a.shape[0]):
            out[i] = a[i].no_such_attribute

    with pytest.raises(Exception) as info:
        kernel(np.ones(3), np.empty(3))
    short = trim_numba_error(info.value)
    lines = short.splitlines()
    assert lines[0] == "TypingError: Unknown attribute 'no_such_attribute' of type float64"
    assert any("out[i] = a[i].no_such_attribute" in ln for ln in lines)
    assert any("During: typing of get attribute" in ln for ln in lines)
    assert len(lines) < len(str(info.value).splitlines())
    assert trim_numba_error(ValueError("not Numba's")) is None


def test_a_test_file_whose_import_never_ends_is_stopped(tmp_path):
    """pytest-timeout limits tests, not collection: the session has a limit of its own
    (ten per-test limits), after which every task scores 0 with that reason."""
    tasks = _edition(tmp_path, {
        "test_m9_a.py": '''
            import pytest

            while True:
                pass

            @pytest.mark.task("9.1")
            def test_never_collected(): pass
        '''})
    result = grade(tmp_path, tasks, timeout=0.5)
    assert _scores(result)["9.1"][2] == 0.0
    assert any("ran longer than 5 s and was stopped" in w for w in result.warnings), \
        result.warnings


def test_course_runs_name_the_editions_tasks_for_the_bounds_checks(tmp_path):
    # In an edition only the kernels built from its own tasks (the student's code) are
    # compiled with bounds checks (backends/kernel_cache.py reads the list); in the
    # reference, every task's.
    from minitorch.course.grading import course_env
    tasks = [CourseTask("2.1", 2, "map", "minitorch/backends/cpu/elementwise.py",
                        "unary_contiguous", "tests/course/test_m2_kernels.py"),
             CourseTask("2.2", 2, "zip", "minitorch/backends/cpu/elementwise.py",
                        "arith_contiguous", "tests/course/test_m2_kernels.py")]
    write_record(tmp_path, tasks, [2])
    env = course_env(tmp_path, {"MINITORCH_COURSE_TASKS": "9.9"})
    assert env["MINITORCH_COURSE_CHECKS"] == "1" and env["MINITORCH_COURSE_TASKS"] == "2.1,2.2"
    reference = course_env(tmp_path / "elsewhere", {"MINITORCH_COURSE_TASKS": "9.9"})
    assert reference["MINITORCH_COURSE_CHECKS"] == "1" and "MINITORCH_COURSE_TASKS" not in reference
