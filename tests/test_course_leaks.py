"""The edition leak check's twin finder (minitorch/course/leaks.py): whole functions that
repeat a stubbed task's lines, idioms included.  Pure text, no edition built (< 1 s)."""

from __future__ import annotations

from minitorch.course.leaks import _twins, distinctive_lines

# Task 5.9's block as it was when Adagrad.step was the task and three optimizers beside it
# wrote the same loop: the line check called its lines idioms (written 3+ times).
BLOCK = distinctive_lines("""
        loss = self._closure_loss(closure)
        for group, p, state in self._with_grad():
            settings = {name: float(group[name]) for name in ("lr", "eps")}
            hyper = AdagradStep(step=advance_step(state["step"]), **settings)
            fused_update(hyper, p, p.grad, [state["sum"]])
        return loss
""".split("\n"))

SIBLING = '''
class SGD(Optimizer):
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group, p, state in self._with_grad():
            hyper = SGDStep(lr=float(group["lr"]))
            fused_update(hyper, p, p.grad, [state.get("momentum_buffer")])
        return loss
'''

UNRELATED = '''
def zero_grad(self):
    for group in self.param_groups:
        for p in group["params"]:
            p.grad = None

def closure_loss(self, closure):
    loss = self._closure_loss(closure)
    return loss
'''


def test_a_sibling_that_repeats_the_loop_is_a_twin():
    found = _twins([("minitorch/optim/sgd.py", SIBLING)], {"5.9": BLOCK})
    assert found == [("5.9", "twin of its block (2 of 5 lines) in step",
                      "minitorch/optim/sgd.py:3")]


def test_one_shared_line_or_another_file_kind_is_no_twin():
    # One line in common is an idiom (the closure's loss); a page of docs is the line
    # check's business, not this one's.
    assert _twins([("minitorch/optim/optimizer.py", UNRELATED)], {"5.9": BLOCK}) == []
    assert _twins([("docs/course/module5.md", SIBLING)], {"5.9": BLOCK}) == []
    assert _twins([("broken.py", "def f(:\n")], {"5.9": BLOCK}) == []
