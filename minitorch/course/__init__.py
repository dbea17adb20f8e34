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
  blocks of the chosen modules stubbed (``minitorch course build DEST``),
  its record of those tasks (:mod:`.record`) and its front page
  (:mod:`.readme`);
* :mod:`.grading` runs the tests marked ``@pytest.mark.task("M.N")`` and
  scores each task (``minitorch course grade``, Gradescope's
  ``results.json``): a test counts only if it ran and passed;
* :mod:`.wrong` checks that each task's tests reject its kept wrong
  solutions; :mod:`.leaks` that an edition gives no solution away;
* :mod:`.autograde` is the grader's entry point that runs even when the
  student's package does not import.

The modules and their tasks are listed in ``docs/course/``.
"""

from .markers import MODULES, Task, find_tasks, strip_source

__all__ = ["MODULES", "Task", "find_tasks", "strip_source"]
