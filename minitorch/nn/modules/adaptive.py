"""``AdaptiveLogSoftmaxWithLoss``: a softmax over a large vocabulary, cheap for the frequent words.

Grave et al. (2016): the most frequent classes (the "shortlist", below
``cutoffs[0]``) get a full row of the head layer; the rest are grouped into
clusters, each represented in the head by one extra logit.  A word in cluster
``i`` has log-probability ``log p(cluster i) + log p(word | cluster i)``, the
second term from a small tail network whose hidden size shrinks by
``div_value`` per cluster.  Only the clusters that the batch's targets fall in
are computed.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any, Sequence

from ...dtype import int64

from ...ops.creation import tensor, zeros
from ...ops.views import cat
from ...tensor import Tensor
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Returns ``(output, loss)``: each target's log-probability and their mean negative."""

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, **kw),
                                        Linear(hsz, osz, bias=False, **kw)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> Any:
        if target_.dim() == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {list(input_.shape)}")
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {list(input_.shape)}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        n = target.shape[0]
        labels = [int(v) for v in target.tolist()]
        if any(t < 0 or t >= self.n_classes for t in labels):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{min(labels)}, {max(labels)}] were found. ")
        # The head's column for each row: the word itself, or its cluster's logit.
        head_col = list(labels)
        output = zeros(n, dtype=input.dtype, device=input.device)
        for i in range(1, len(self.cutoffs)):
            low, high = self.cutoffs[i - 1], self.cutoffs[i]
            rows = [r for r, t in enumerate(labels) if low <= t < high]
            if not rows:
                continue
            for r in rows:
                head_col[r] = self.shortlist_size + i - 1
            idx = tensor(rows, dtype=int64, device=input.device)
            cluster_logprob = F.log_softmax(self.tail[i - 1](input.index_select(0, idx)), 1)
            relative = tensor([[labels[r] - low] for r in rows], dtype=int64,
                              device=input.device)
            local = cluster_logprob.gather(1, relative).squeeze(1)
            output = output + zeros(n, dtype=input.dtype, device=input.device).scatter(
                0, idx, local)
        head_logprob = F.log_softmax(self.head(input), 1)
        cols = tensor([[c] for c in head_col], dtype=int64, device=input.device)
        output = output + head_logprob.gather(1, cols).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head_logprob = F.log_softmax(head_output, 1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), 1)
            prior = head_logprob[:, self.shortlist_size + i].unsqueeze(1)
            parts.append(cluster_logprob + prior)
        return cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        """Log-probabilities of every class, (N, n_classes)."""
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        out = self._get_full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row (the argmax of ``log_prob``)."""
        return self.log_prob(input).argmax(-1)



