"""ember.utils.viz.make_dot: the DOT text of an autograd graph, read back here and compared
with a walk of ember's grad_fn graph and of real PyTorch's graph for the same model."""
import re
import shutil
from collections import Counter

import pytest

import ember
from ember.utils.viz import ExecutableNotFound, make_dot

_NODE = re.compile(r'^\t"([^"]+)" \[label="((?:[^"\\]|\\.)*)" fillcolor="(\w+)"\]$', re.M)
_EDGE = re.compile(r'^\t"([^"]+)" -> "([^"]+)"', re.M)


def parse(dot):
    """{id: (label, colour)} and the list of edges of make_dot's DOT text."""
    nodes = {m[1]: (m[2].replace("\\n", "\n"), m[3]) for m in _NODE.finditer(dot.source)}
    edges = [(m[1], m[2]) for m in _EDGE.finditer(dot.source)]
    return nodes, edges


def walk(root_fn, short):
    """Names of the backward nodes reachable from root_fn (each once) and the leaves'
    (id, shape) behind their AccumulateGrad nodes."""
    names, leaves, seen, todo = Counter(), [], set(), [root_fn]
    while todo:
        fn = todo.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        names[short(fn)] += 1
        if hasattr(fn, "variable"):
            leaves.append((id(fn.variable), tuple(fn.variable.shape)))
        todo.extend(f for f, _ in fn.next_functions)
    return names, leaves


def _mlp(lib):
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    loss = nn.functional.mse_loss(model(lib.randn(5, 3)), lib.randn(5, 2))
    return model, loss


def _label(shape, name=""):
    return f"{name}\n ({', '.join(map(str, shape))})"


def test_mlp_graph_names_every_parameter_and_node():
    model, loss = _mlp(ember)
    params = dict(model.named_parameters())
    dot = make_dot(loss, params=params)
    nodes, edges = parse(dot)
    names, leaves = walk(loss.grad_fn,
                         lambda fn: fn.name().replace("torch::autograd::", ""))
    grey = Counter(label for label, colour in nodes.values() if colour == "lightgrey")
    assert grey == names
    blue = sorted(label for label, colour in nodes.values() if colour == "lightblue")
    assert blue == sorted(_label(p.shape, n) for n, p in params.items())
    assert len(leaves) == 4
    (out,) = [label for label, colour in nodes.values() if colour == "darkolivegreen1"]
    assert out == _label(())
    assert {"AccumulateGrad", "MseLossBackward0", "TanhBackward0"} <= set(names)   # (torch's)
    # Edges run from inputs to users: the output tensor has one edge in and none out.
    out_id = next(k for k, (_, c) in nodes.items() if c == "darkolivegreen1")
    assert [t for t, h in edges if h == out_id] == [str(id(loss.grad_fn))]
    assert not [h for t, h in edges if t == out_id]
    assert all(t in nodes and h in nodes for t, h in edges)


def test_same_graph_as_pytorch_where_names_agree(torch_mod):
    model, loss = _mlp(ember)
    ours, _ = parse(make_dot(loss, params=dict(model.named_parameters())))
    ours_grey = Counter(label for label, c in ours.values() if c == "lightgrey")
    ours_blue = sorted(label for label, c in ours.values() if c == "lightblue")
    tmodel, tloss = _mlp(torch_mod)
    tnames, tleaves = walk(tloss.grad_fn, lambda fn: type(fn).__name__)
    tparams = {id(p): n for n, p in tmodel.named_parameters()}
    assert ours_blue == sorted(_label(shape, tparams[i]) for i, shape in tleaves)
    shared = set(ours_grey) & set(tnames)
    assert {"AccumulateGrad", "TanhBackward0"} <= shared
    assert {n: ours_grey[n] for n in shared} == {n: tnames[n] for n in shared}


def test_cnn_nodes_match_pytorch(torch_mod):
    def build(lib):
        nn = lib.nn
        lib.manual_seed(0)
        net = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.BatchNorm2d(2), nn.ReLU(),
                            nn.MaxPool2d(2), nn.Flatten(), nn.Linear(18, 3))
        return net, net(lib.randn(2, 1, 6, 6)).sum()
    net, out = build(ember)
    nodes, _ = parse(make_dot(out, params=dict(net.named_parameters())))
    grey = Counter(label for label, c in nodes.values() if c == "lightgrey")
    _, tout = build(torch_mod)
    tnames, _ = walk(tout.grad_fn, lambda fn: type(fn).__name__)
    for name in ("ConvolutionBackward0", "NativeBatchNormBackward0", "ReluBackward0",
                 "MaxPool2DWithIndicesBackward0", "AccumulateGrad"):
        assert grey[name] == tnames[name] > 0, name


def test_attrs_saved_and_several_outputs():
    x = ember.randn(3, 4, requires_grad=True)
    y = x.transpose(0, 1)
    z = (y * y).sum()
    dot = make_dot((z, y), params={"x": x}, show_attrs=True, show_saved=True)
    nodes, edges = parse(dot)
    labels = [label for label, _ in nodes.values()]
    assert "TransposeBackward0\ndim0: 0\ndim1: 1" in labels
    assert sum(c == "darkolivegreen1" for _, c in nodes.values()) == 2
    saved = [k for k, (_, c) in nodes.items() if c == "orange"]
    mul = next(k for k, (label, _) in nodes.items() if label.startswith("MulBackward0"))
    assert len(saved) == 2 and all((mul, s) in edges for s in saved)
    assert all(nodes[s][0].endswith("(4, 3)") for s in saved)
    assert _label((3, 4), "x") in labels


def test_render_or_clear_message(tmp_path, monkeypatch):
    x = ember.ones(2, requires_grad=True)
    dot = make_dot((x * 2).sum(), params={"x": x})
    path = dot.save(str(tmp_path / "g.gv"))
    assert open(path).read() == dot.source == str(dot)
    if shutil.which("dot"):
        out = dot.render(str(tmp_path / "g"), format="svg")
        text = open(out).read()
        assert out.endswith("g.svg") and "<svg" in text and "MulBackward0" in text
        assert dot.pipe("png")[:8] == b"\x89PNG\r\n\x1a\n"
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    with pytest.raises(ExecutableNotFound, match="Graphviz's `dot` program"):
        dot.render(str(tmp_path / "h"))
    assert not (tmp_path / "h").exists()
    assert dot._repr_svg_() is None
