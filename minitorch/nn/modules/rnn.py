"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their single-step ``*Cell`` forms.

A recurrent layer applies the same cell at every time step, carrying a
hidden state forward.  Weights follow PyTorch's layout so that state dicts
are interchangeable: ``weight_ih_l{k}`` (gates x input), ``weight_hh_l{k}``
(gates x hidden), biases ``bias_ih_l{k}`` and ``bias_hh_l{k}``; the LSTM
stacks its gates as (input, forget, cell, output), the GRU as (reset,
update, new).  All weights start as U(-1/sqrt(hidden), 1/sqrt(hidden)).

The time loop is Python (one step per iteration), but each step is a few
large tensor ops over the whole batch.
"""

from __future__ import annotations

import math
from typing import Any

from ...ops.creation import empty, zeros
from ...ops.views import stack
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module
from ...ops.views import cat

__all__ = ["RNNCell", "LSTMCell", "GRUCell", "RNN", "LSTM", "GRU", "RNNBase", "RNNCellBase"]


def _rnn_step(x: Tensor, h: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Any, b_hh: Any,
              nonlinearity: str) -> Tensor:
    pre = F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)
    return pre.tanh() if nonlinearity == "tanh" else pre.relu()


def _lstm_step(x: Tensor, state: tuple, w_ih: Tensor, w_hh: Tensor, b_ih: Any, b_hh: Any
               ) -> tuple:
    h, c = state
    gates = F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    c = f * c + i * g
    h = o * c.tanh()
    return h, c


def _gru_step(x: Tensor, h: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Any, b_hh: Any) -> Tensor:
    gi = F.linear(x, w_ih, b_ih)
    gh = F.linear(h, w_hh, b_hh)
    i_r, i_z, i_n = gi.chunk(3, -1)
    h_r, h_z, h_n = gh.chunk(3, -1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    return (1 - z) * n + z * h


class _CellBase(Module):
    _gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        g = self._gates * hidden_size
        self.weight_ih = Parameter(empty(g, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(empty(g, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(g, device=device, dtype=dtype))
            self.bias_hh = Parameter(empty(g, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def _zeros(self, input: Tensor) -> Tensor:
        shape = (input.shape[0], self.hidden_size) if input.dim() == 2 else (self.hidden_size,)
        return zeros(*shape, dtype=input.dtype, device=input.device)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        return s


class RNNCell(_CellBase):
    """``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        h = self._zeros(input) if hx is None else hx
        return _rnn_step(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh,
                         self.nonlinearity)


class LSTMCell(_CellBase):
    _gates = 4

    def forward(self, input: Tensor, hx: Any = None) -> tuple:
        if hx is None:
            hx = (self._zeros(input), self._zeros(input))
        return _lstm_step(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)


class GRUCell(_CellBase):
    _gates = 3

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        h = self._zeros(input) if hx is None else hx
        return _gru_step(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)


class _RNNBase(Module):
    mode = "RNN_TANH"
    _gates = 1

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None, nonlinearity: str = "tanh") -> None:
        super().__init__()
        if proj_size:
            raise ValueError("minitorch's recurrent layers do not support proj_size")
        if not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1]")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        self.nonlinearity = nonlinearity
        dirs = 2 if bidirectional else 1
        g = self._gates * hidden_size
        for layer in range(num_layers):
            for d in range(dirs):
                suffix = f"_l{layer}" + ("_reverse" if d else "")
                in_size = input_size if layer == 0 else hidden_size * dirs
                setattr(self, "weight_ih" + suffix,
                        Parameter(empty(g, in_size, device=device, dtype=dtype)))
                setattr(self, "weight_hh" + suffix,
                        Parameter(empty(g, hidden_size, device=device, dtype=dtype)))
                if bias:
                    setattr(self, "bias_ih" + suffix,
                            Parameter(empty(g, device=device, dtype=dtype)))
                    setattr(self, "bias_hh" + suffix,
                            Parameter(empty(g, device=device, dtype=dtype)))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def _weights(self, layer: int, reverse: bool) -> tuple:
        s = f"_l{layer}" + ("_reverse" if reverse else "")
        return (getattr(self, "weight_ih" + s), getattr(self, "weight_hh" + s),
                getattr(self, "bias_ih" + s) if self.bias else None,
                getattr(self, "bias_hh" + s) if self.bias else None)

    def _step(self, x: Tensor, state: Any, weights: tuple) -> Any:
        raise NotImplementedError  # abstract: each recurrent layer defines its step

    def _init_state(self, batch: int, like: Tensor) -> Any:
        dirs = 2 if self.bidirectional else 1
        return zeros(self.num_layers * dirs, batch, self.hidden_size, dtype=like.dtype,
                     device=like.device)

    def forward(self, input: Tensor, hx: Any = None) -> tuple:
        unbatched = input.dim() == 2
        x = input.unsqueeze(1 if not self.batch_first else 0) if unbatched else input
        if self.batch_first:
            x = x.transpose(0, 1)                      # (T, N, C)
        if x.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {x.shape[-1]}")
        batch = x.shape[1]
        if hx is not None and unbatched:
            hx = tuple(h.unsqueeze(1) for h in hx) if isinstance(hx, tuple) else hx.unsqueeze(1)
        state0 = self._unpack_state(hx, batch, x)
        dirs = 2 if self.bidirectional else 1
        layer_input = x
        finals = []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                weights = self._weights(layer, d == 1)
                state = self._state_at(state0, layer * dirs + d)
                steps = range(layer_input.shape[0] - 1, -1, -1) if d else \
                    range(layer_input.shape[0])
                seq = [None] * layer_input.shape[0]
                for t in steps:
                    state = self._step(layer_input[t], state, weights)
                    seq[t] = state[0] if isinstance(state, tuple) else state
                outs.append(stack(seq, 0))
                finals.append(state)
            # A bidirectional layer's output is both directions side by side.
            layer_input = outs[0] if dirs == 1 else _cat_last(outs)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        output = layer_input.transpose(0, 1) if self.batch_first else layer_input
        h_n = self._pack_state(finals)
        if unbatched:
            output = output.squeeze(0 if self.batch_first else 1)
            h_n = tuple(h.squeeze(1) for h in h_n) if isinstance(h_n, tuple) else h_n.squeeze(1)
        return output, h_n

    def _unpack_state(self, hx: Any, batch: int, like: Tensor) -> Any:
        return self._init_state(batch, like) if hx is None else hx

    def _state_at(self, state: Any, k: int) -> Any:
        return state[k]

    def _pack_state(self, finals: list) -> Any:
        return stack(finals, 0)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


def _cat_last(parts: list) -> Tensor:
    return cat(parts, -1)


class RNN(_RNNBase):
    """Elman RNN: ``h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)

    def _step(self, x: Tensor, h: Tensor, weights: tuple) -> Tensor:
        return _rnn_step(x, h, *weights, self.nonlinearity)


class GRU(_RNNBase):
    _gates = 3

    def _step(self, x: Tensor, h: Tensor, weights: tuple) -> Tensor:
        return _gru_step(x, h, *weights)


class LSTM(_RNNBase):
    """Long short-term memory; the state is the pair ``(h, c)``."""

    _gates = 4

    def _step(self, x: Tensor, state: tuple, weights: tuple) -> tuple:
        return _lstm_step(x, state, *weights)

    def _unpack_state(self, hx: Any, batch: int, like: Tensor) -> Any:
        if hx is None:
            z = self._init_state(batch, like)
            return (z, z)
        return hx

    def _state_at(self, state: Any, k: int) -> Any:
        return (state[0][k], state[1][k])

    def _pack_state(self, finals: list) -> Any:
        return (stack([h for h, _ in finals], 0), stack([c for _, c in finals], 0))



class RNNBase(_RNNBase):
    """PyTorch's public base of the recurrent layers: ``RNNBase(mode, input_size, ...)``.

    ``mode`` is ``'LSTM'``, ``'GRU'``, ``'RNN_TANH'`` or ``'RNN_RELU'``; the
    module built is the matching layer (so ``RNNBase('LSTM', 4, 8)`` runs an LSTM).
    """

    def __new__(cls, mode: str = "RNN_TANH", *args: Any, **kwargs: Any) -> Any:
        layers = {"LSTM": LSTM, "GRU": GRU, "RNN_TANH": RNN, "RNN_RELU": RNN}
        if mode not in layers:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        if mode == "RNN_RELU":
            kwargs = {**kwargs, "nonlinearity": "relu"}
        return layers[mode](*args, **kwargs)


class RNNCellBase(_CellBase):
    """PyTorch's public base of the cells: ``num_chunks`` gates of ``hidden_size`` each."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: Any = None) -> None:
        self._gates = num_chunks
        super().__init__(input_size, hidden_size, bias, device, dtype)
