"""Seeing inside a model: capture intermediate activations with forward hooks.

A forward hook is a function ``hook(module, inputs, output)`` that a module
calls after each ``forward``.  Registering one on every ``Conv2d`` of a
model and running one image through it collects what each convolution
sees, without changing the model's code (this is how feature extractors are
built on pretrained networks in PyTorch)::

    activations = {}

    def keep(name):
        def hook(module, inputs, output):
            activations[name] = output.detach()
        return hook

    handles = [m.register_forward_hook(keep(name))
               for name, m in model.named_modules() if isinstance(m, nn.Conv2d)]
    with torch.no_grad():
        model(image[None])               # one image: a batch of one
    for h in handles:
        h.remove()                       # the model is as it was

``minitorch evaluate CHECKPOINT --features maps.png`` draws the result.
"""

from __future__ import annotations

import numpy as np

from .. import nn
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor

__all__ = ["conv_layers", "capture_activations", "feature_maps"]


def conv_layers(model: nn.Module) -> list[tuple[str, nn.Conv2d]]:
    """The model's ``Conv2d`` modules with their dotted names, in the order they were built."""
    return [(name, m) for name, m in model.named_modules() if isinstance(m, nn.Conv2d)]


def capture_activations(model: nn.Module, x: Tensor,
                        layers: list[tuple[str, nn.Module]]) -> dict[str, Tensor]:
    """Run ``model(x)`` once and return the output of each of ``layers``, by name."""
    activations: dict[str, Tensor] = {}

    def keep(name: str):
        def hook(module: nn.Module, inputs: tuple, output: Tensor) -> None:
            activations[name] = output.detach()
        return hook

    handles = [m.register_forward_hook(keep(name)) for name, m in layers]
    was_training = model.training
    model.eval()
    try:
        with no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
        model.train(was_training)
    return activations


def feature_maps(model: nn.Module, image: Tensor) -> tuple[np.ndarray, list]:
    """The first convolution's weights and every conv layer's maps for one ``image`` (C, H, W).

    Returns ``(filters (out, in, kh, kw), [(name, maps (channels, h, w)), ...])``.
    """
    layers = conv_layers(model)
    if not layers:
        raise ValueError("the model has no convolution layers")
    acts = capture_activations(model, image.unsqueeze(0), layers)
    filters = layers[0][1].weight.detach().cpu().numpy()
    maps = [(name, acts[name][0].cpu().numpy()) for name, _ in layers]
    return filters, maps
