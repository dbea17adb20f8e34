"""asv benchmark suites for minitorch (``asv run``; see docs/benchmarks.md).

The workloads come from :mod:`minitorch.bench`, the module behind
``minitorch bench``, so asv and the comparison command time the same code.
"""
