"""The CUDA generators: one ember Generator per device (PyTorch's `default_generators`).

NOTE: a CUDA generator runs the same mt19937 stream as the CPU one and its numbers are moved
to the device, so a seeded program draws the same values on cpu and cuda and reproduces run
to run; they are not PyTorch's CUDA (Philox) numbers, which no public spec pins down.
"""
from .._device import device as _device_cls
from .._random import Generator

__all__ = ["manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
           "get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all"]

_generators = {}
_seeded = []   # the last ember.manual_seed value, which generators made later start from


def generator(index):
    """The default generator of cuda:`index` (made on first use)."""
    gen = _generators.get(index)
    if gen is None:
        gen = _generators[index] = Generator(_device_cls("cuda", index))
        if _seeded:
            gen.manual_seed(_seeded[0])
    return gen


def _index(device):
    from . import _backend, _index   # (cycle: ember.cuda imports this module first)
    backend = _backend()
    return backend.check_index(_index(device, optional=False))


def manual_seed(seed):
    """Seed the current device's generator; silently nothing without a GPU (as PyTorch)."""
    from . import is_available   # (cycle: ember.cuda imports this module first)
    if is_available():
        generator(_index(None)).manual_seed(seed)


def manual_seed_all(seed):
    from . import device_count   # (cycle: ember.cuda imports this module first)
    for i in range(device_count()):
        generator(i).manual_seed(seed)


def seed():
    from . import is_available   # (cycle: ember.cuda imports this module first)
    if is_available():
        generator(_index(None)).seed()


def seed_all():
    from . import device_count   # (cycle: ember.cuda imports this module first)
    for i in range(device_count()):
        generator(i).seed()


def initial_seed():
    return generator(_index(None)).initial_seed()


def get_rng_state(device="cuda"):
    return generator(_index(device)).get_state()


def set_rng_state(new_state, device="cuda"):
    generator(_index(device)).set_state(new_state)


def get_rng_state_all():
    from . import device_count   # (cycle: ember.cuda imports this module first)
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def seed_all_lazily(seed):
    """torch.manual_seed also seeds every CUDA generator, including ones not made yet."""
    _seeded[:] = [seed]
    for gen in _generators.values():
        gen.manual_seed(seed)
