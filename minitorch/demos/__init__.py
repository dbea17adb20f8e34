"""Layer 13 helpers: the demo models and the training loop behind ``minitorch train``."""
