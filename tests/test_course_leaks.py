"""The edition leak check's twin finder (minitorch/course/leaks.py): whole functions that
repeat a stubbed task's lines, idioms included.  Pure text, no edition built (< 1 s).

The block below is made up (no task's code: this file ships in every edition); it has
the shape of the case the twin finder exists for, a loop that sibling classes repeat.
"""

from __future__ import annotations

from minitorch.course.leaks import _twins, distinctive_lines

BLOCK = distinctive_lines("""
        total = self._start_the_tally(items)
        for shelf, box, label in self._boxes_to_weigh():
            weights = {key: float(shelf[key]) for key in ("tare", "gross")}
            record = WeighingRecord(count=advance_count(label["count"]), **weights)
            weigh_in_place(record, box, box.content, [label["scale"]])
        return total
""".split("\n"))

SIBLING = '''
class Sibling(Base):
    def run(self, items=None):
        total = self._start_the_tally(items)
        for shelf, box, label in self._boxes_to_weigh():
            record = OtherRecord(tare=float(shelf["tare"]))
            weigh_in_place(record, box, box.content, [label.get("other")])
        return total
'''

UNRELATED = '''
def clear(self):
    for shelf in self.shelves:
        for box in shelf["boxes"]:
            box.content = None

def tally(self, items):
    total = self._start_the_tally(items)
    return total
'''


def test_a_sibling_that_repeats_the_loop_is_a_twin():
    found = _twins([("minitorch/store/sibling.py", SIBLING)], {"9.9": BLOCK})
    assert found == [("9.9", "twin of its block (2 of 5 lines) in run",
                      "minitorch/store/sibling.py:3")]


def test_one_shared_line_or_another_file_kind_is_no_twin():
    # One line in common is an idiom; a page of docs is the line check's business.
    assert _twins([("minitorch/store/base.py", UNRELATED)], {"9.9": BLOCK}) == []
    assert _twins([("docs/store.md", SIBLING)], {"9.9": BLOCK}) == []
    assert _twins([("broken.py", "def f(:\n")], {"9.9": BLOCK}) == []
