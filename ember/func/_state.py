"""The switch the op registry's door reads: zero cost when no function transform is open.

`depth` counts the open vmap levels; while it is nonzero `dispatch` hands every call to
`handler` (ember.func.batched_tensor.intercept), which batches calls that have a batched
operand and returns None for the others. Kept apart from the rest of ember.func so that the
registry can import it at start-up without importing the transforms.
"""
depth = 0
handler = None
commit_inplace = None
