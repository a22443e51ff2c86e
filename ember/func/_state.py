"""The switch the op registry's door reads: zero cost when no function transform is open.

`depth` counts the open vmap levels and forward-AD dual levels; while it is nonzero
`dispatch` hands every call to `handler` (ember.func.batched_tensor.intercept), which runs
calls with a batched or dual operand through their transformation and returns None for the
others. Kept apart from the rest of ember.func so that the registry can import it at
start-up without importing the transforms.
"""
depth = 0
handler = None
commit_inplace = None
# Set by ember.autograd.forward_ad: the dual tensor class, its door step and in-place commit.
dual_type = None
dual_step = None
dual_commit = None
