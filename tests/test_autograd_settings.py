"""torch.autograd's engine switches and small names (issue 23) against torch."""
import pytest

import ember


def test_switches_report_and_restore_like_torch(torch_mod):
    assert ember.autograd.is_multithreading_enabled() is torch_mod.autograd.\
        is_multithreading_enabled()
    assert ember.autograd.is_view_replay_enabled() is torch_mod.autograd.is_view_replay_enabled()
    seen = {}
    for lib in (torch_mod, ember):
        is_on = lib.autograd.is_multithreading_enabled
        record = seen.setdefault(lib.__name__, [])
        with lib.autograd.set_multithreading_enabled(False):
            record.append(is_on())
        record.append(is_on())
        lib.autograd.set_multithreading_enabled(False)   # a plain call sets it
        record.append(is_on())
        lib.autograd.set_multithreading_enabled(True)

        @lib.autograd.set_multithreading_enabled(False)
        def probe():
            return is_on()
        record += [is_on(), probe(), is_on()]
        lib.autograd.set_multithreading_enabled(True)
    assert seen["ember"] == seen["torch"]
    x = ember.ones(3, requires_grad=True)
    with ember.autograd.enforce_grad_layout_policy(False):
        (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_names_match_torch(torch_mod):
    theirs = {k: int(v) for k, v in torch_mod.autograd.DeviceType.__members__.items()}
    assert {k: int(v) for k, v in ember.autograd.DeviceType.__members__.items()} == theirs
    with pytest.raises(RuntimeError) as t:
        torch_mod.autograd.variable(torch_mod.ones(1))
    with pytest.raises(RuntimeError) as e:
        ember.autograd.variable(ember.ones(1))
    assert str(e.value) == str(t.value)
    for value in (ember.ones(1), 3, [1]):
        tv = torch_mod.ones(1) if isinstance(value, ember.Tensor) else value
        assert ember.autograd.is_tensor_like(value) is torch_mod.autograd.is_tensor_like(tv)
    assert ember.autograd.has_torch_function((ember.ones(1),)) is \
        torch_mod.autograd.has_torch_function((torch_mod.ones(1),))
    assert ember.autograd.kineto_available() is False   # (no Kineto profiler in ember)
