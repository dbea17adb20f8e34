"""The course edition: assignments cut from this very code, and their grader.

The reference source marks each task's solution in nbgrader's convention::

    def index_to_position(index, strides, offset=0):
        \"\"\"...\"\"\"
        # Task 1.1: offset plus the sum of index[d] * strides[d].
        ### BEGIN SOLUTION
        ...
        ### END SOLUTION

* :mod:`.markers` finds the tasks and turns a solution block into a stub
  that raises ``NotImplementedError("Task 1.1: ...")``;
* :mod:`.build` writes a student edition: a copy of the repository with the
  blocks of the chosen modules stubbed (``minitorch course build DEST``);
* :mod:`.grading` runs the tests marked ``@pytest.mark.task("M.N")`` and
  scores each task (``minitorch course grade``, Gradescope's
  ``results.json``).

The modules and their tasks are listed in ``docs/course/``.
"""

from .markers import MODULES, Task, find_tasks, strip_source

__all__ = ["MODULES", "Task", "find_tasks", "strip_source"]
