"""SparseAdam: Adam for sparse gradients. ember has no sparse tensors, so it cannot step."""
from .._tensor import Tensor
from .optimizer import Optimizer, check_betas

__all__ = ["SparseAdam"]

_NO_SPARSE = ("SparseAdam does not support dense gradients, please consider Adam instead "
              "(ember has no sparse tensors: nn.Embedding(sparse=True) and "
              "nn.EmbeddingBag(sparse=True) produce dense gradients, which Adam handles)")


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_betas(betas)
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        complex_params = [i for group in self.param_groups
                          for i, p in enumerate(group["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does "
                             "not support complex parameters")

    def step(self, closure=None):
        def update():
            for group in self.param_groups:
                if any(p._grad is not None for p in group["params"]):
                    raise RuntimeError(_NO_SPARSE)
        return self._run_step(closure, update)
