"""The front page of a student edition (its ``README.md``).

An edition is handed out as a repository of its own, so its README is the
first thing a student reads: which module(s) it holds, what to read, the
commands of the loop (install, list, test one task, see progress, grade),
and how the work is submitted and graded.  The engine's own README stays in
the reference repository (its docs are still in ``docs/``).
"""

from __future__ import annotations

from .markers import MODULES

__all__ = ["edition_readme"]


def _task_lines(record: dict) -> list:
    lines = []
    module = None
    for t in record["tasks"]:
        if t["module"] != module:
            module = t["module"]
            lines += ["", f"**Module {module}: {MODULES.get(module, '')}**", "",
                      "| task | where | what it must do |", "|---|---|---|"]
        what = t["statement"].replace("|", "\\|")
        lines.append(f"| {t['id']} | `{t['file']}`: `{t['function']}` | {what} |")
    return lines


def edition_readme(record: dict) -> str:
    """The README.md of the edition described by ``record`` (see :mod:`.record`)."""
    modules = record["modules"]
    if len(modules) == 1:
        m = modules[0]
        title = f"minitorch, module {m}: {MODULES.get(m, '')}"
        read = (f"Start with the module's page, `docs/course/module{m}.md`: the goal, the "
                "concepts it builds on and a hint for each task.")
    else:
        title = "minitorch: the course (modules " + ", ".join(str(m) for m in modules) + ")"
        read = ("Each module has a page, `docs/course/module<M>.md` (the goal, the concepts, a "
                "hint for each task). Do the modules in order: later modules use earlier ones.")
    first = record["tasks"][0]["id"] if record["tasks"] else "1.1"
    n = len(record["tasks"])
    return "\n".join([
        f"# {title}",
        "",
        "This is a student edition of minitorch, an educational tensor engine with "
        "PyTorch's API whose kernels are readable Python compiled by Numba. "
        f"{n} functions in it are yours to write: each one's body is a single line,",
        "",
        "```python",
        f'raise NotImplementedError("Task {first}: ...")',
        "```",
        "",
        "under a `# Task M.N:` comment that says what the function must do (its docstring "
        "gives the arguments, the result and an example). Everything else in the engine is "
        "finished and uses your functions.",
        "",
        "## What to read",
        "",
        read,
        "`docs/course/numba-errors.md` shows how to read the errors Numba prints when a "
        "kernel does not compile or reads past the end of an array.",
        "",
        "## Your tasks",
        *_task_lines(record),
        "",
        "## The loop",
        "",
        "```bash",
        "python -m venv .venv && . .venv/bin/activate",
        'pip install -e ".[test]"          # the engine, and the test tools',
        "minitorch course tasks            # your tasks: id, file, function, what to do",
        f"minitorch course test {first:<13}# one task's tests (a short report; the first run compiles)",
        "minitorch course status           # a table: not started / failing / passing, points",
        "minitorch course grade            # what the autograder will say, with points",
        "```",
        "",
        "`course test` says in its last line whether the task passes, fails (and with what "
        "error), or waits for another task that is still a stub. Kernels are tested with "
        "Numba's bounds checking on, so a loop that writes one element past the end of an "
        "array fails with an IndexError instead of silently corrupting memory.",
        "",
        "## Submitting",
        "",
        "Submit on Gradescope, either by uploading a zip of this folder (or only its "
        "`minitorch/` folder) or by linking your repository. The autograder takes your "
        "`minitorch/` package, puts it into a fresh copy of this edition (with the course's "
        "own tests and grader, so editing those changes nothing), and runs",
        "",
        "```bash",
        "python minitorch/course/autograde.py --json /autograder/results/results.json",
        "```",
        "",
        "which is `minitorch course grade`: every task's tests, each task worth 10 points "
        "times the fraction of its tests that pass. A test only counts if it ran and passed: "
        "a test that crashes the process, or runs longer than the time limit (an infinite "
        "loop), fails, and so does every test of a file that does not import (a syntax "
        "error). Run `minitorch course grade` before you submit: it is the same check.",
        "",
    ])
