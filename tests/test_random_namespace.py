"""ember.random (torch.random) against real torch: seeding, state bytes and restoring, seed(),
and fork_rng's restore semantics and errors."""
import numpy as np
import pytest

import ember


def test_manual_seed_and_state_match_torch(torch_mod):
    for m in (ember, torch_mod):
        g = m.random.manual_seed(1234)
        assert type(g).__name__ == "Generator" and m.random.initial_seed() == 1234
    np.testing.assert_array_equal(ember.random.get_rng_state().numpy(),
                                  torch_mod.random.get_rng_state().numpy())
    np.testing.assert_array_equal(ember.rand(5).numpy(), torch_mod.rand(5).numpy())


def test_set_rng_state_replays_the_stream(torch_mod):
    ember.random.manual_seed(7)
    state = ember.random.get_rng_state()
    first = ember.randn(4).numpy()
    ember.random.set_rng_state(state)
    np.testing.assert_array_equal(ember.randn(4).numpy(), first)
    torch_mod.random.manual_seed(7)
    np.testing.assert_array_equal(first, torch_mod.randn(4).numpy())


def test_seed_sets_a_fresh_initial_seed():
    s = ember.random.seed()
    assert isinstance(s, int) and ember.random.initial_seed() == s
    assert ember.random.seed() != s   # (non-deterministic seeds: equal only by 1/2**64)


@pytest.mark.parametrize("enabled", [True, False])
def test_fork_rng_restores_the_cpu_state(enabled, torch_mod):
    draws = []
    for m in (ember, torch_mod):
        m.random.manual_seed(3)
        with m.random.fork_rng(enabled=enabled, devices=[]):
            inside = m.rand(3).numpy()
        draws.append((inside, m.rand(3).numpy()))
    np.testing.assert_array_equal(draws[0][0], draws[1][0])
    np.testing.assert_array_equal(draws[0][1], draws[1][1])
    assert np.array_equal(draws[0][0], draws[0][1]) == enabled


def test_fork_rng_restores_after_an_exception():
    ember.random.manual_seed(11)
    expected = ember.random.get_rng_state()
    with pytest.raises(ValueError):
        with ember.random.fork_rng():
            ember.rand(10)
            raise ValueError
    assert ember.equal(ember.random.get_rng_state(), expected)


def test_fork_rng_device_types_match_torch(torch_mod):
    for m in (ember, torch_mod):
        with m.random.fork_rng(device_type="meta"):   # (nothing forked, nothing raised)
            pass
    messages = []
    for m in (ember, torch_mod):
        with pytest.raises(RuntimeError) as exc:
            with m.random.fork_rng(device_type="foo"):
                pass
        messages.append(str(exc.value))
    assert messages[0] == messages[1]


def test_names_match_torch(torch_mod):
    public = {"Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed",
              "manual_seed", "seed", "set_rng_state", "thread_safe_generator"}
    assert public <= set(dir(torch_mod.random))
    assert all(hasattr(ember.random, n) for n in public)
    assert ember.random.thread_safe_generator() is torch_mod.random.thread_safe_generator()
