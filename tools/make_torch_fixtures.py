"""Regenerate tests/fixtures/: files written by real PyTorch and safetensors, for minitorch to read.

The tests read these files on machines without PyTorch, so they prove that
minitorch reads what PyTorch writes (not only what minitorch writes).  Every
tensor's values are a function of its shape (``arange``), so the tests
compute what they expect with NumPy alone.

Run with PyTorch and safetensors installed::

    python tools/make_torch_fixtures.py

and commit the files (a few KB).  tests/test_serialization.py describes what
each holds.
"""

from __future__ import annotations

import os
from collections import OrderedDict

import torch
from safetensors.torch import save_file

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures")

DTYPES = ["float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool"]


def arange(shape: tuple, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    n = 1
    for s in shape:
        n *= s
    values = torch.arange(n, dtype=torch.float64).reshape(shape)
    return (values % 2).to(dtype) if dtype == torch.bool else values.to(dtype)


def state() -> dict:
    torch.manual_seed(0)
    linear = torch.nn.Linear(3, 2)
    with torch.no_grad():
        linear.weight.copy_(arange((2, 3)))
        linear.bias.copy_(arange((2,)))
    base = arange((3, 4))
    return {
        "state_dict": linear.state_dict(),          # OrderedDict with _metadata (a BUILD)
        "views": {"base": base, "row": base[1], "col": base[:, 2], "t": base.t(),
                  "tail": base.view(-1)[5:]},
        "dtypes": {name: arange((2, 3), getattr(torch, name)) for name in DTYPES},
        "scalar": torch.tensor(3.5),
        "empty": torch.zeros(0, 3),
        "param": torch.nn.Parameter(arange((3,))),
        "frozen": torch.nn.Parameter(arange((2,)), requires_grad=False),
        "grad": arange((3,)).requires_grad_(),
        "nested": [(1, 2.5, "x", None, True), {"k": [arange((2,), torch.int64)]}],
        "ordered": OrderedDict([("b", 1), ("a", 2)]),
        "size": torch.Size([2, 3]),
        "dtype": torch.float16,
        "device": torch.device("cpu"),
        "big_int": 2 ** 40,
    }


def main() -> None:
    os.makedirs(HERE, exist_ok=True)
    torch.save(state(), os.path.join(HERE, "torch_state.pt"))
    torch.save(arange((2, 2)), os.path.join(HERE, "torch_tensor.pt"))
    torch.save({"w": arange((2,))}, os.path.join(HERE, "torch_legacy.pt"),
               _use_new_zipfile_serialization=False)
    tensors = {name: arange((2, 3), getattr(torch, name)) for name in DTYPES}
    tensors["scalar"] = torch.tensor(3.5)
    tensors["empty"] = torch.zeros(0, 3)
    save_file(tensors, os.path.join(HERE, "weights.safetensors"),
              metadata={"format": "pt", "note": "written by safetensors.torch"})
    for name in sorted(os.listdir(HERE)):
        print(f"{name}: {os.path.getsize(os.path.join(HERE, name))} bytes")


if __name__ == "__main__":
    main()
