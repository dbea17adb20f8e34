"""Layer 12: datasets (MNIST and small synthetic 2-D sets)."""

from .mnist import MNIST, load_mnist_arrays, read_idx
from .toy import TOY_DATASETS, circles, spiral, split, xor

__all__ = ["MNIST", "read_idx", "load_mnist_arrays", "xor", "circles", "spiral", "split",
           "TOY_DATASETS"]
