"""ember's random stream against PyTorch 2.13's CPU generator: bit-identical values for every
random function, the same consumption of the stream by mixed sequences of calls, and state
round trips."""
import numpy as np
import pytest

import ember

SEEDS = range(21)
SHAPES = [(), (1,), (15,), (16,), (17,), (1000,), (3, 7), (5, 16)]
FLOATS = ["float32", "float64"]


def same(t, e):
    """Exact equality of a torch tensor and an ember tensor (dtype, shape, every bit)."""
    assert str(t.dtype).split(".")[1] == str(e.dtype).split(".")[1], (t.dtype, e.dtype)
    if str(t.dtype) in ("torch.bfloat16", "torch.float16"):
        t, e = t.float(), e.float()
    a, b = t.detach().numpy(), np.asarray(e.detach()._data)
    assert a.shape == b.shape, (a.shape, b.shape)
    if a.dtype.kind == "f":
        assert np.array_equal(a, b, equal_nan=True), np.nonzero(a != b)[0][:10]
    else:
        assert np.array_equal(a, b), np.nonzero(a != b)[0][:10]


def run_both(torch, fn, seed):
    """fn(lib, gen) run under one seed in torch and in ember (default generator)."""
    torch.manual_seed(seed)
    ember.manual_seed(seed)
    return fn(torch), fn(ember)


def check(torch, fn, seeds=SEEDS):
    for seed in seeds:
        t, e = run_both(torch, fn, seed)
        if isinstance(t, (tuple, list)):
            for a, b in zip(t, e):
                same(a, b)
        else:
            same(t, e)


def dt(lib, name):
    return getattr(lib, name)


def few(shape):
    """Large shapes keep the suite fast with a few seeds."""
    return range(3) if int(np.prod(shape)) > 100 else SEEDS


# ---------------------------------------------------------------------- factories
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_rand_randn(torch_mod, shape, dtype):
    check(torch_mod, lambda L: L.rand(shape, dtype=dt(L, dtype)), few(shape))
    check(torch_mod, lambda L: L.randn(shape, dtype=dt(L, dtype)), few(shape))
    if shape:
        check(torch_mod, lambda L: L.randn(*shape, dtype=dt(L, dtype)), range(2))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_rand_reduced_precision(torch_mod, dtype):
    check(torch_mod, lambda L: L.rand(40, dtype=dt(L, dtype)), range(5))
    check(torch_mod, lambda L: L.empty(40, dtype=dt(L, dtype)).uniform_(-2, 3), range(5))
    check(torch_mod, lambda L: L.randn(7, dtype=dt(L, dtype)), range(5))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_randn_reduced_precision_blocks(torch_mod, dtype):
    check(torch_mod, lambda L: L.randn(64, dtype=dt(L, dtype)), range(3))
    for n in (16, 17, 40, 100):
        check(torch_mod, lambda L: L.empty(n, dtype=dt(L, dtype)).normal_(0.5, 2.0), range(3))


def test_rand_like_randn_like(torch_mod):
    def fn(L):
        x = L.zeros(4, 5, dtype=L.float64)
        return L.rand_like(x), L.randn_like(x), L.randn_like(x, dtype=L.float32)
    check(torch_mod, fn)


@pytest.mark.parametrize("shape", SHAPES)
def test_randint(torch_mod, shape):
    check(torch_mod, lambda L: L.randint(3, 17, shape), few(shape))
    check(torch_mod, lambda L: L.randint(10, shape), few(shape))
    check(torch_mod, lambda L: L.randint(-2 ** 40, 2 ** 40, shape), few(shape))


def test_randint_dtypes_and_like(torch_mod):
    def fn(L):
        return (L.randint(0, 255, (30,), dtype=L.uint8), L.randint(-5, 5, (30,), dtype=L.int32),
                L.randint(0, 100, (30,), dtype=L.float32),
                L.randint_like(L.zeros(3, 4), 10), L.randint_like(L.zeros(9), 3, 8),
                L.randint(2 ** 33, size=(5,)))
    check(torch_mod, fn)


@pytest.mark.parametrize("n", [0, 1, 2, 5, 16, 17, 100, 1000])
def test_randperm(torch_mod, n):
    check(torch_mod, lambda L: L.randperm(n), few((n,)))
    check(torch_mod, lambda L: L.randperm(n, dtype=L.int32), range(2))


# ---------------------------------------------------------------------- normal overloads
def test_normal_overloads(torch_mod):
    def fn(L):
        m = L.arange(20, dtype=L.float32)
        s = L.tensor(np.linspace(0.5, 3, 20), dtype=L.float32)
        return (L.normal(2.0, 3.0, (20,)), L.normal(2.0, 3.0, size=(5,)),
                L.normal(m, 2.5), L.normal(1.5, s), L.normal(m, s),
                L.normal(m[:5], s[:5]), L.normal(-1.0, 0.5, (3, 3), dtype=L.float64))
    check(torch_mod, fn)


@pytest.mark.parametrize("shape", [(5,), (16,), (33,), (1000,)])
@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_mean_std(torch_mod, shape, dtype):
    check(torch_mod, lambda L: L.empty(shape, dtype=dt(L, dtype)).normal_(0.3, 1.7),
          few(shape))
    check(torch_mod, lambda L: L.empty(shape, dtype=dt(L, dtype)).uniform_(-1.3, 2.9),
          few(shape))


def test_normal_noncontiguous(torch_mod):
    # a strided view takes PyTorch's element-by-element path, in memory order
    def fn(L):
        x = L.zeros(8, 6)
        x.t().normal_()
        y = L.zeros(10, 4, dtype=L.float64)
        y[:, 1:3].normal_(1.0, 2.0)
        return x, y
    check(torch_mod, fn)


def test_normal_cache_interleaving(torch_mod):
    # odd-sized small normals leave a cached value that the next small normal uses
    def fn(L):
        return (L.randn(3), L.randn(1, dtype=L.float64), L.empty(5).log_normal_(),
                L.randn(20), L.randn(5), L.rand(3), L.randn(2))
    check(torch_mod, fn)


# ---------------------------------------------------------------------- in-place samplers
@pytest.mark.parametrize("shape", [(), (15,), (17,), (1000,)])
@pytest.mark.parametrize("dtype", FLOATS)
def test_inplace_samplers(torch_mod, shape, dtype):
    def fn(L):
        d = dt(L, dtype)
        return (L.empty(shape, dtype=d).exponential_(), L.empty(shape, dtype=d).exponential_(2.5),
                L.empty(shape, dtype=d).geometric_(0.3), L.empty(shape, dtype=d).log_normal_(),
                L.empty(shape, dtype=d).log_normal_(0.5, 0.25),
                L.empty(shape, dtype=d).cauchy_(), L.empty(shape, dtype=d).cauchy_(1.0, 2.0),
                L.empty(shape, dtype=d).uniform_(), L.empty(shape, dtype=d).bernoulli_(0.3),
                L.empty(shape, dtype=d).random_(), L.empty(shape, dtype=d).random_(7),
                L.empty(shape, dtype=d).random_(-3, 9))
    check(torch_mod, fn, few(shape))


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64",
                                   "float16", "bfloat16"])
def test_random_dtypes(torch_mod, dtype):
    def fn(L):
        d = dt(L, dtype)
        out = [L.empty(50, dtype=d).random_(), L.empty(50, dtype=d).random_(2),
               L.empty(50, dtype=d).bernoulli_(0.6)]
        if dtype != "bool":
            out.append(L.empty(50, dtype=d).random_(3, None))
            out.append(L.empty(50, dtype=d).geometric_(0.2))
        return out
    check(torch_mod, fn, range(5))


def test_random_full_int64_range(torch_mod):
    check(torch_mod, lambda L: L.empty(20, dtype=L.int64).random_(-2 ** 63, None))


# ---------------------------------------------------------------------- bernoulli / multinomial
def test_bernoulli_tensor_p(torch_mod):
    def fn(L):
        g = L.Generator().manual_seed(99)
        p32 = L.rand(40, generator=g)
        p64 = L.rand(3, 13, generator=g, dtype=L.float64)
        return (L.bernoulli(p32), L.bernoulli(p64), L.bernoulli(p32, 0.25),
                L.zeros(40, dtype=L.int64).bernoulli_(p32), p32.bernoulli(),
                L.zeros(5, 40).bernoulli_(p32))
    check(torch_mod, fn)


@pytest.mark.parametrize("dtype", FLOATS)
def test_multinomial(torch_mod, dtype):
    def fn(L):
        g = L.Generator().manual_seed(5)
        p = L.rand(4, 30, generator=g, dtype=dt(L, dtype))
        p[:, 3] = 0
        q = L.tensor([0.1, 0.0, 0.6, 0.3], dtype=dt(L, dtype))
        return (L.multinomial(p, 1), L.multinomial(p, 5), L.multinomial(p, 50, True),
                L.multinomial(q, 3), L.multinomial(q, 100, replacement=True),
                q.multinomial(1))
    check(torch_mod, fn)


# ---------------------------------------------------------------------- generators and state
def test_generator_argument_is_independent(torch_mod):
    def fn(L):
        g = L.Generator().manual_seed(1234)
        a = L.rand(5, generator=g)
        b = L.randn(17)                         # default generator
        c = L.randn(20, generator=g)
        d = L.randint(0, 9, (4,), generator=g)
        e = L.randperm(10, generator=g)
        f = L.empty(6).normal_(generator=g)
        return a, b, c, d, e, f, L.rand(2)
    check(torch_mod, fn)


def test_state_bytes_match_torch(torch_mod):
    for seed in (0, 7, 2 ** 40 + 3):
        torch_mod.manual_seed(seed)
        ember.manual_seed(seed)
        same(torch_mod.get_rng_state(), ember.get_rng_state())
        for call in (lambda L: L.rand(3), lambda L: L.randn(3, dtype=L.float64),
                     lambda L: L.randn(700)):
            call(torch_mod)
            call(ember)
            same(torch_mod.get_rng_state(), ember.get_rng_state())


def test_state_round_trips(torch_mod):
    ember.manual_seed(3)
    ember.randn(5)
    state = ember.get_rng_state()
    a = ember.randn(41)
    ember.set_rng_state(state)
    assert np.array_equal(a.numpy(), ember.randn(41).numpy())
    # across libraries, both ways
    torch_mod.manual_seed(11)
    torch_mod.randn(3)
    ember.set_rng_state(ember.tensor(torch_mod.get_rng_state().numpy()))
    same(torch_mod.randn(9), ember.randn(9))
    g = ember.Generator().manual_seed(4)
    g.normal_double(1)
    torch_mod.set_rng_state(torch_mod.from_numpy(g.get_state().numpy().copy()))
    e = ember.randn(3, generator=g)
    same(torch_mod.randn(3), e)


def test_state_errors(torch_mod):
    with pytest.raises(RuntimeError, match="Expected a CPUGeneratorImplState of size 5056 but "
                       "found the input RNG state size to be 10"):
        ember.set_rng_state(ember.zeros(10, dtype=ember.uint8))
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        ember.set_rng_state(ember.zeros(5056))


def test_seeds(torch_mod):
    for s in (0, 5, -1, 2 ** 64 - 1, -2 ** 63):
        assert torch_mod.manual_seed(s).initial_seed() == ember.manual_seed(s).initial_seed()
    for bad in (2 ** 64, -2 ** 63 - 1):
        with pytest.raises(ValueError):
            ember.manual_seed(bad)
    s = ember.seed()
    assert ember.initial_seed() == s
    assert ember.Generator().initial_seed() == torch_mod.Generator().initial_seed()
    g = ember.Generator()
    assert g.device.type == "cpu" and g.manual_seed(3) is g
    assert ember.manual_seed(1) is ember.default_generator


# ---------------------------------------------------------------------- errors as PyTorch's
ERRORS = [
    lambda L: L.randint(5, 5, (3,)),
    lambda L: L.randint(5, 3, (3,)),
    lambda L: L.empty(3, dtype=L.uint8).random_(0, 300),
    lambda L: L.empty(3, dtype=L.uint8).random_(-1, 3),
    lambda L: L.empty(3).bernoulli_(1.5),
    lambda L: L.bernoulli(L.tensor([1.5])),
    lambda L: L.multinomial(L.tensor([-1., 1.]), 1),
    lambda L: L.multinomial(L.tensor([0., 0.]), 1),
    lambda L: L.multinomial(L.tensor([1., 1.]), 3),
    lambda L: L.multinomial(L.tensor([1., float("nan")]), 2, True),
    lambda L: L.multinomial(L.tensor([1., -1.]), 2, True),
    lambda L: L.multinomial(L.tensor(1.), 1),
    lambda L: L.multinomial(L.tensor([1, 2]), 1),
    lambda L: L.multinomial(L.ones(2), 0),
    lambda L: L.empty(3).exponential_(-1),
    lambda L: L.empty(3).geometric_(0),
    lambda L: L.empty(3).normal_(0, -1),
    lambda L: L.empty(3).log_normal_(0, -1),
    lambda L: L.empty(3).cauchy_(0, -1),
    lambda L: L.empty(3).uniform_(2, 1),
    lambda L: L.empty(3, dtype=L.int64).uniform_(0, 1),
    lambda L: L.empty(3, dtype=L.int64).normal_(),
    lambda L: L.empty(3, dtype=L.int64).exponential_(),
    lambda L: L.randperm(-1),
    lambda L: L.rand(2, dtype=L.int64),
    lambda L: L.normal(L.zeros(3), -L.ones(3)),
    lambda L: L.normal(0, -1, (3,)),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(torch_mod, i):
    with pytest.raises(Exception) as expected:
        ERRORS[i](torch_mod)
    with pytest.raises(type(expected.value)) as got:
        ERRORS[i](ember)
    assert str(got.value).split("\n")[0] == str(expected.value).split("\n")[0]


def test_inplace_on_leaf_requiring_grad():
    x = ember.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.normal_()
    with ember.no_grad():
        x.uniform_()
    assert x.requires_grad and x._vc.v == 1
    assert ember.rand(2, requires_grad=True).requires_grad


def test_out_and_method_forms(torch_mod):
    def fn(L):
        o = L.empty(0)
        L.rand(4, out=o)
        o2 = L.empty(0, dtype=L.int64)
        L.randint(0, 5, (3,), out=o2)
        return o, o2
    check(torch_mod, fn)


def test_long_streams_read_inline_match_torch(torch_mod):
    """Fills read MT19937's state inline in the kernel layer (random.c's direct_words, checked
    once against NumPy's own function): long streams, hundreds of generation steps, give
    torch's values and leave torch's state bytes, with the normals' transform on one thread
    and on a team of two."""
    from ember.backends.cpu_kernels import compiled
    before = ember.get_num_threads()
    try:
        for seed, threads in ((0, 1), (5, 2)):
            ember.set_num_threads(threads)
            check(torch_mod, lambda L: (L.rand(100_003, dtype=L.float64), L.randn(70_001),
                                        L.randn(30_007, dtype=L.float64),
                                        L.nn.functional.dropout(L.ones(50_000), 0.3)), [seed])
            same(torch_mod.get_rng_state(), ember.get_rng_state())
    finally:
        ember.set_num_threads(before)
    if compiled is not None:
        assert compiled.direct_words() == 1
