"""torch.autograd.graph's public helpers, each checked against real PyTorch on the same
program: saved-tensor hooks, save_on_cpu, gradient edges, multi-grad hooks, versions."""
import numpy as np
import pytest

import ember
from ember.autograd import graph as eg

from checks import assert_close


def _run_both(torch_mod, program):
    """program(lib, graph_module) -> list of results, for torch and ember."""
    return (program(torch_mod, torch_mod.autograd.graph), program(ember, eg))


def _leaf(lib, values):
    return lib.tensor(values, requires_grad=True)


def test_public_names_match_torch(torch_mod):
    wanted = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
              "register_multi_grad_hook", "GradientEdge", "get_gradient_edge",
              "increment_version", "allow_mutation_on_saved_tensors", "Node"]
    for name in wanted:
        assert hasattr(torch_mod.autograd.graph, name)
        assert hasattr(eg, name), name
    assert torch_mod.autograd.graph.Variable is torch_mod.autograd.Variable
    assert eg.Variable is ember.autograd.Variable


def test_unpack_hook_result_is_what_backward_uses(torch_mod):
    def program(lib, g):
        x = _leaf(lib, [0.5, 1.0, 2.0])
        with g.saved_tensors_hooks(lambda t: t, lambda t: t * 2):
            y = x.sin()
        y.sum().backward()
        return x.grad.numpy()
    t, e = _run_both(torch_mod, program)
    assert_close(e, t)


def test_pack_sees_saved_values_and_unpack_runs_in_backward(torch_mod):
    def program(lib, g):
        events = []
        x = _leaf(lib, [1.0, 2.0])

        def pack(t):
            events.append(("pack", t.detach().numpy().copy()))
            return t.detach().clone()

        def unpack(t):
            events.append(("unpack",))
            return t
        with g.saved_tensors_hooks(pack, unpack):
            y = x.exp()
        events.append("backward")
        y.sum().backward()
        return events, x.grad.numpy()
    (t_events, t_grad), (e_events, e_grad) = _run_both(torch_mod, program)
    assert_close(e_grad, t_grad)
    assert [ev[0] for ev in e_events] == [ev[0] for ev in t_events]
    assert_close(e_events[0][1], t_events[0][1])   # exp's saved output


def test_hooked_values_skip_the_version_check(torch_mod):
    def program(lib, g):
        x = _leaf(lib, [1.0, 2.0])
        with g.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
            y = x * 1
            z = y.sin()
        y.add_(1)
        z.sum().backward()
        return x.grad.numpy()
    t, e = _run_both(torch_mod, program)
    assert_close(e, t)


def test_innermost_hooks_win(torch_mod):
    def program(lib, g):
        calls = []
        x = _leaf(lib, [1.0])
        with g.saved_tensors_hooks(lambda t: calls.append("outer") or t, lambda t: t):
            with g.saved_tensors_hooks(lambda t: calls.append("inner") or t, lambda t: t):
                x.sin()
        return calls
    t, e = _run_both(torch_mod, program)
    assert e == t


def test_unpack_must_return_a_tensor(torch_mod):
    def program(lib, g):
        x = _leaf(lib, [1.0])
        with g.saved_tensors_hooks(lambda t: t, lambda t: 3):
            y = x.sin()
        with pytest.raises(TypeError) as info:
            y.sum().backward()
        return str(info.value)
    t, e = _run_both(torch_mod, program)
    assert e == t


def test_function_saved_tensors_go_through_hooks(torch_mod):
    def program(lib, g):
        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a ** 3

            @staticmethod
            def backward(ctx, grad):
                (a,) = ctx.saved_tensors
                return grad * 3 * a ** 2
        calls = []
        x = _leaf(lib, [1.0, -2.0])
        with g.saved_tensors_hooks(lambda t: calls.append("pack") or t + 1,
                                   lambda t: calls.append("unpack") or t):
            y = Cube.apply(x)
        y.sum().backward()
        return calls, x.grad.numpy()
    (t_calls, t_grad), (e_calls, e_grad) = _run_both(torch_mod, program)
    assert e_calls == t_calls
    assert_close(e_grad, t_grad)


def test_save_on_cpu_gives_plain_gradients(torch_mod):
    def program(lib, g):
        x = _leaf(lib, [[1.0, 2.0], [3.0, -1.0]])
        w = _leaf(lib, [[0.5], [-1.5]])
        with g.save_on_cpu(pin_memory=False):
            loss = (x @ w).tanh().sum() + (x * x).sum()
        loss.backward()
        return x.grad.numpy(), w.grad.numpy()
    t, e = _run_both(torch_mod, program)
    assert_close(e[0], t[0])
    assert_close(e[1], t[1])
    assert issubclass(eg.save_on_cpu, eg.saved_tensors_hooks)


def test_disable_saved_tensors_hooks(torch_mod):
    def program(lib, g):
        messages = []
        with g.disable_saved_tensors_hooks("no hooks here"):
            with pytest.raises(RuntimeError) as info:
                with g.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
            messages.append(str(info.value))
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):   # allowed again after
            pass
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):
            with pytest.raises(RuntimeError) as info:
                with g.disable_saved_tensors_hooks("already hooked"):
                    pass
            messages.append(str(info.value))
        return messages
    t, e = _run_both(torch_mod, program)
    assert e == t


def test_gradient_edge(torch_mod):
    def program(lib, g):
        x = _leaf(lib, [1.0, 2.0])
        y = x.exp()
        leaf_edge, y_edge = g.get_gradient_edge(x), g.get_gradient_edge(y)
        with pytest.raises(RuntimeError) as info:
            g.get_gradient_edge(lib.ones(2))
        return (type(leaf_edge.node).__name__, leaf_edge.output_nr, y_edge.node.name(),
                y_edge.output_nr, y_edge.ownership_token, g.GradientEdge._fields,
                str(info.value), y_edge.node is y.grad_fn)
    t, e = _run_both(torch_mod, program)
    assert e == t


def test_increment_version(torch_mod):
    def program(lib, g):
        a, b = lib.zeros(2), lib.ones(3)
        g.increment_version(a)
        g.increment_version([a, b])
        x = _leaf(lib, [1.0])
        y = x * 1
        z = y.exp()
        g.increment_version(z)   # exp saved its output: backward must now refuse
        with pytest.raises(RuntimeError) as info:
            z.sum().backward()
        return a._version, b._version, str(info.value).split(";")[0][-25:]
    t, e = _run_both(torch_mod, program)
    assert e == t


def test_multi_grad_hook_all_and_any(torch_mod):
    def program(lib, g):
        a, b, c = _leaf(lib, [1.0, 2.0]), _leaf(lib, [3.0]), _leaf(lib, [1.0])
        seen = []

        def record(grads):
            seen.append([None if t is None else t.numpy().tolist() for t in grads])
        handle = g.register_multi_grad_hook((a, b, c), record)
        (a.sum() * 2 + b.sum()).backward()
        (a * 3).sum().backward()
        handle.remove()
        (a * 3).sum().backward()
        firsts = []
        g.register_multi_grad_hook((a, c), lambda t: firsts.append(t.numpy().tolist()),
                                   mode="any")
        (a.sum() + (c * 4).sum()).backward()
        with pytest.raises(ValueError) as info:
            g.register_multi_grad_hook((a,), record, mode="some")
        return seen, len(firsts), str(info.value)
    t, e = _run_both(torch_mod, program)
    assert e == t


def test_allow_mutation_on_saved_tensors(torch_mod):
    def program(lib, g):
        x = _leaf(lib, [1.0, 2.0, 0.5])
        with g.allow_mutation_on_saved_tensors():
            y = x * 1
            z = (y * y).sum() + y.sin().sum()
            y.mul_(3)
            z.backward()
        with pytest.raises(RuntimeError) as info:
            with g.allow_mutation_on_saved_tensors():
                with g.allow_mutation_on_saved_tensors():
                    pass
        return x.grad.numpy(), str(info.value)
    t, e = _run_both(torch_mod, program)
    assert_close(e[0], t[0])
    assert e[1] == t[1]


def test_hooks_off_again_after_region():
    """After the region the compiled door takes plain calls again and nodes save normally:
    an in-place change of a saved tensor is caught (against PyTorch's known rule)."""
    x = ember.tensor(np.array([1.0, 2.0], np.float32), requires_grad=True)
    with eg.saved_tensors_hooks(lambda t: t, lambda t: t):
        pass
    y = x * 1
    z = y.sin()
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_node_isinstance(torch_mod):
    def program(lib, g):
        x = lib.tensor([1.0], requires_grad=True)
        y = (x * 2).exp()
        leaf_node = y.grad_fn.next_functions[0][0].next_functions[0][0]
        return (isinstance(y.grad_fn, g.Node), isinstance(leaf_node, g.Node),
                type(leaf_node).__name__, issubclass(type(leaf_node), g.Node),
                isinstance(x, g.Node), isinstance(3, g.Node))
    t, e = _run_both(torch_mod, program)
    assert e == t


def test_hooks_over_a_network_of_fused_ops(torch_mod):
    """Convolution, batch/layer norm, GELU, pooling, LSTM, losses, indexing: every VJP reads
    its saved values back through the unpack hook (packed as detached copies)."""
    def program(lib, g):
        F = lib.nn.functional
        lib.manual_seed(0)
        conv = lib.nn.Conv2d(2, 3, 3, padding=1)
        bn = lib.nn.BatchNorm2d(3)
        ln = lib.nn.LayerNorm(12)
        lin = lib.nn.Linear(12, 5)
        lstm = lib.nn.LSTM(5, 4, batch_first=True)
        x = lib.randn(2, 2, 4, 4, requires_grad=True)
        with g.saved_tensors_hooks(lambda t: ("packed", t.detach().clone()), lambda p: p[1]):
            h = F.max_pool2d(F.gelu(bn(conv(x))), 2).flatten(1)
            y = lin(ln(h).tanh())
            o, _ = lstm(y.view(2, 1, 5).repeat(1, 3, 1))
            loss = (F.cross_entropy(o.reshape(6, 4), lib.tensor([0, 1, 2, 3, 0, 1]))
                    + (y.softmax(-1) * y.log_softmax(-1)).sum()
                    + F.mse_loss(y, lib.ones_like(y)) + lib.where(y > 0, y, y * 2).sum()
                    + y.sigmoid().prod() + y[:, 1:3].exp().sum())
        loss.backward()
        return [p.grad.numpy() for p in (x, conv.weight, bn.weight, ln.weight, lin.weight,
                                         *lstm.parameters())]
    t, e = _run_both(torch_mod, program)
    for a, b in zip(e, t):
        assert_close(a, b, atol=1e-4, rtol=1e-4)


def test_save_on_cpu_keeps_gpu_values_on_the_host(torch_mod, cuda_standin):
    """Tensors saved on a (stand-in) GPU are packed as CPU tensors and come back on their
    device for backward; the gradients are torch's (computed on the CPU)."""
    seen = []
    x = ember.tensor([[1.0, 2.0], [3.0, -1.0]], device="cuda:1", requires_grad=True)
    with eg.save_on_cpu():
        loss = (x.exp() * x).sum()
    with eg.saved_tensors_hooks(lambda t: seen.append(t.device.type) or t, lambda t: t):
        (x * 2).sum()
    loss.backward()
    assert x.grad.device == ember.device("cuda:1") and seen == ["cuda"]
    hooks = eg.save_on_cpu()
    packed = hooks.pack_hook(x)
    assert packed[1].device.type == "cpu"
    assert hooks.unpack_hook(packed).device == ember.device("cuda:1")
    tx = torch_mod.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
    (tx.exp() * tx).sum().backward()
    assert_close(x.grad.cpu().numpy(), tx.grad.numpy())
