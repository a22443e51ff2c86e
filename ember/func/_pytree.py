"""Nested tuples, lists and dicts of leaves (the containers torch.func's transforms walk),
and the structure text PyTorch prints when in_dims/out_dims do not fit their inputs."""


class TreeSpec:
    """The shape of a nested container: its type, its dict keys, and its children's specs;
    a leaf is TreeSpec(None)."""

    __slots__ = ("kind", "context", "children")

    def __init__(self, kind=None, context=None, children=()):
        self.kind, self.context, self.children = kind, context, tuple(children)

    @property
    def is_leaf(self):
        return self.kind is None

    def num_leaves(self):
        return 1 if self.is_leaf else sum(c.num_leaves() for c in self.children)

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.kind is other.kind and
                self.context == other.context and self.children == other.children)

    def __repr__(self, indent=0):
        if self.is_leaf:
            return "*"
        pad = " " * (indent + 2)
        inner = f",\n{pad}".join(c.__repr__(indent + 2) for c in self.children)
        context = "None" if self.context is None else repr(list(self.context))
        return f"TreeSpec({self.kind.__name__}, {context}, [{inner}])"


def flatten(tree):
    """(leaves, spec) of `tree`: tuples, lists and dicts are containers, all else leaves."""
    leaves = []
    spec = _flatten(tree, leaves)
    return leaves, spec


def _flatten(tree, leaves):
    kind = type(tree)
    if kind in (tuple, list) or isinstance(tree, tuple):   # namedtuples, return_types too
        return TreeSpec(kind, None, [_flatten(x, leaves) for x in tree])
    if kind is dict:
        keys = list(tree)
        return TreeSpec(dict, keys, [_flatten(tree[k], leaves) for k in keys])
    leaves.append(tree)
    return TreeSpec()


def unflatten(spec, leaves):
    it = iter(leaves)
    return _build(spec, it)


def _build(spec, it):
    if spec.is_leaf:
        return next(it)
    children = [_build(c, it) for c in spec.children]
    if spec.kind is dict:
        return dict(zip(spec.context, children))
    if hasattr(spec.kind, "_make"):   # a namedtuple takes its fields one by one
        return spec.kind._make(children)
    return spec.kind(children)


def broadcast_prefix(prefix, tree_spec):
    """One value per leaf of `tree_spec` from `prefix`, a tree matching a prefix of its
    structure (a leaf of `prefix` applies to the whole subtree); None when they do not fit."""
    out = []
    if not _broadcast(prefix, tree_spec, out):
        return None
    return out


def _broadcast(prefix, spec, out):
    kind = type(prefix)
    if kind not in (tuple, list, dict) and not isinstance(prefix, tuple):
        out.extend([prefix] * spec.num_leaves())
        return True
    if spec.is_leaf or spec.kind is not kind or len(prefix) != len(spec.children):
        return False
    if kind is dict:
        if list(prefix) != list(spec.context) and set(prefix) != set(spec.context):
            return False
        return all(_broadcast(prefix[k], c, out) for k, c in zip(spec.context, spec.children))
    return all(_broadcast(p, c, out) for p, c in zip(prefix, spec.children))
