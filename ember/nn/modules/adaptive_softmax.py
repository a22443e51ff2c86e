"""AdaptiveLogSoftmaxWithLoss (Grave et al., 2016): a softmax over many classes split by
frequency. The `head` scores the frequent classes (the shortlist) and one entry per tail
cluster; each cluster scores its own classes through a smaller projection (in_features /
div_value^(i+1) wide). A class's log-probability is its head score, plus its in-cluster
score when it lives in a tail cluster."""
from collections import namedtuple

from ...ops.registry import PUBLIC
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if not cutoffs:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1 \
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        kwargs = {"device": device, "dtype": dtype}
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        # NOTE: head first, then each cluster's two layers: PyTorch's creation order, so a
        # seeded model starts from PyTorch's weights
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kwargs)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **kwargs),
                                        Linear(hidden, size, bias=False, **kwargs)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection:
                layer.reset_parameters()

    def _check(self, input, target):
        if target.dim() == 1:
            if input.size(0) != target.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input.dim() != 2:
                raise RuntimeError("1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input.size()}")
        elif target.dim() == 0:
            if input.dim() != 1:
                raise RuntimeError("0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")

    def forward(self, input_, target_):
        self._check(input_, target_)
        batched = target_.dim() == 1
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        batch = target.size(0)
        # log p(class) = head score of (the class | its cluster) + in-cluster score
        in_cluster = input.new_zeros(batch)
        head_column = target.clone()
        covered = 0
        bounds = [0] + self.cutoffs
        for i, (low, high) in enumerate(zip(bounds, bounds[1:])):
            rows = ((target >= low) & (target < high)).nonzero().reshape(-1)
            covered += rows.numel()
            if i == 0 or rows.numel() == 0:
                continue
            head_column = head_column.index_fill(0, rows, self.shortlist_size + i - 1)
            scores = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
            local = (target.index_select(0, rows) - low).unsqueeze(1)
            in_cluster = in_cluster.index_copy(0, rows, scores.gather(1, local).squeeze(1))
        if covered != batch:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head = F.log_softmax(self.head(input), dim=1)
        output = in_cluster + head.gather(1, head_column.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input, head_output):
        head = F.log_softmax(head_output, dim=1)
        parts = [head[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster + head[:, self.shortlist_size + i].unsqueeze(1))
        return PUBLIC["cat"](parts, 1)

    def log_prob(self, input):
        """Log-probabilities of all n_classes classes, (N, n_classes)."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most probable class per row: the head's choice when it is a shortlist class,
        else the argmax of the full distribution (computed only for those rows)."""
        head_output = self.head(input)
        best = head_output.argmax(dim=1)
        outside = best >= self.shortlist_size
        if not outside.any():
            return best
        if outside.all():
            return self._full_log_prob(input, head_output).argmax(dim=1)
        best[outside] = self._full_log_prob(input[outside], head_output[outside]).argmax(dim=1)
        return best
