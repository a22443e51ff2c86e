"""torch.serialization's helpers on ember, against real PyTorch: checkpoint options that
change what save/load do (skip_data, byte order, mmap flags), location tags, unsafe-global
listing, version checks and the small utilities."""
import io
import mmap
import os
import types
import warnings

import numpy as np
import pytest

import ember
import ember.serialization as es


def _both(torch_mod, program):
    return program(torch_mod, torch_mod.serialization), program(ember, es)


def test_skip_data_writes_layout_with_zero_bytes(torch_mod):
    def program(lib, S):
        with S.skip_data():
            buf = io.BytesIO()
            lib.save({"a": lib.arange(4.0), "b": lib.ones(2, 3, dtype=lib.int64)}, buf)
        buf.seek(0)
        loaded = lib.load(buf)
        return {k: (v.numpy().tolist(), str(v.dtype).split(".")[1]) for k, v in loaded.items()}
    t, e = _both(torch_mod, program)
    assert e == t


def test_files_cross_with_skip_data(torch_mod, tmp_path):
    path = str(tmp_path / "skipped.pt")
    with es.skip_data():
        ember.save([ember.full((3,), 7.0)], path)
    assert torch_mod.load(path)[0].tolist() == [0.0, 0.0, 0.0]


def test_load_endianness_option(torch_mod, tmp_path):
    """A checkpoint written without a byteorder record is read in the default byte order."""
    path = str(tmp_path / "noorder.pt")
    values = np.array([1.5, -2.0, 3.25], np.float32)
    torch_mod.save(torch_mod.tensor(values), path, _disable_byteorder_record=True)
    results = []
    for lib, S in ((torch_mod, torch_mod.serialization), (ember, es)):
        assert S.get_default_load_endianness() is None
        S.set_default_load_endianness(S.LoadEndianness.BIG)
        try:
            big = lib.load(path).numpy().copy()
        finally:
            S.set_default_load_endianness(None)
        results.append((big, lib.load(path).numpy().copy()))
    (t_big, t_native), (e_big, e_native) = results
    np.testing.assert_array_equal(e_big, t_big)
    np.testing.assert_array_equal(e_native, values)
    np.testing.assert_array_equal(t_native, values)


def test_endianness_and_option_errors(torch_mod):
    def program(lib, S):
        out = [[(m.name, m.value) for m in S.LoadEndianness]]
        with pytest.raises(TypeError) as info:
            S.set_default_load_endianness(2)
        out.append(str(info.value))
        with pytest.raises(ValueError) as info:
            S.set_default_mmap_options(5)
        out.append(str(info.value))
        out.append(S.get_default_mmap_options() == mmap.MAP_PRIVATE)
        with S.set_default_mmap_options(mmap.MAP_SHARED):
            out.append(S.get_default_mmap_options() == mmap.MAP_SHARED)
        out.append(S.get_default_mmap_options() == mmap.MAP_PRIVATE)
        out.append(S.get_crc32_options())
        S.set_crc32_options(False)
        out.append(S.get_crc32_options())
        S.set_crc32_options(True)
        return out
    t, e = _both(torch_mod, program)
    assert e == t


def test_mmap_shared_writes_reach_the_file(torch_mod, tmp_path):
    def program(lib, S, path):
        lib.save(lib.zeros(4), path)
        with S.set_default_mmap_options(mmap.MAP_SHARED):
            t = lib.load(path, mmap=True)
            t[1] = 5.0
        del t
        private = lib.load(path, mmap=True)
        private[2] = 9.0
        del private
        return lib.load(path).tolist()
    t = program(torch_mod, torch_mod.serialization, str(tmp_path / "t.pt"))
    e = program(ember, es, str(tmp_path / "e.pt"))
    assert e == t == [0.0, 5.0, 0.0, 0.0]


def test_unsafe_globals_in_checkpoint(torch_mod):
    buf = io.BytesIO()
    torch_mod.save({"a": torch_mod.ones(2), "s": {1, 2}, "m": torch_mod.nn.Linear(1, 1),
                    "f": os.path.join, "od": __import__("collections").OrderedDict()}, buf)
    buf.seek(0)
    expected = torch_mod.serialization.get_unsafe_globals_in_checkpoint(buf)
    buf.seek(0)
    assert sorted(es.get_unsafe_globals_in_checkpoint(buf)) == sorted(expected)
    buf.seek(0)
    with es.safe_globals([os.path.join]):
        assert es.get_unsafe_globals_in_checkpoint(buf) == ["torch.nn.modules.linear.Linear"]


def test_location_tags_and_restore(torch_mod):
    def program(lib, S):
        s = lib.ones(2).untyped_storage()
        out = [S.location_tag(s), S.default_restore_location(s, "cpu") is s]
        with pytest.raises(RuntimeError) as info:
            S.default_restore_location(s, "xyz")
        out.append(str(info.value).replace("torch.", "").replace("ember.", ""))
        if not lib.cuda.is_available():
            with pytest.raises(RuntimeError) as info:
                S.validate_cuda_device("cuda:0")
            out.append(str(info.value))
        seen = []
        S.register_package(5, lambda st: seen.append("tag") or None,
                           lambda st, loc: "moved" if loc == "mine" else None)
        out.append((S.location_tag(s), seen, S.default_restore_location(s, "mine")))
        return out
    t, e = _both(torch_mod, program)
    assert e == t


def test_version_check_mkdtemp_and_warning(torch_mod):
    def program(lib, S):
        out = [S.check_module_version_greater_or_equal(np, (1, 0)),
               S.check_module_version_greater_or_equal(np, (99, 0))]
        mod = types.ModuleType("x")
        mod.__version__ = "abc"
        with pytest.raises(RuntimeError) as info:
            S.check_module_version_greater_or_equal(mod, (1, 0))
        out.append(str(info.value))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out.append(S.check_module_version_greater_or_equal(mod, (1, 0), False))
        out.append([str(w.message) for w in caught])
        with S.mkdtemp() as d:
            out.append(os.path.isdir(d))
        out.append(os.path.exists(d))
        out.append([c.__name__ for c in S.SourceChangeWarning.__mro__[1:]])
        lines, lineno, filename = S.get_source_lines_and_file(program)
        out.append((lines[0].strip(), filename == __file__))
        return out
    t, e = _both(torch_mod, program)
    assert e == t


def test_storage_type_helpers(torch_mod):
    def program(lib, S):
        normalized = S.normalize_storage_type(lib.FloatStorage)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            storage = lib.FloatStorage(2)
        with pytest.raises(AttributeError) as info:   # (torch 2.13's own lookup fails too)
            S.storage_to_tensor_type(storage)
        return (normalized is lib.FloatStorage, normalized.__name__,
                str(info.value).replace("torch.", "").replace("ember.", ""))
    t, e = _both(torch_mod, program)
    assert e == t


def test_files_saved_without_crc32_load(torch_mod):
    """PyTorch under set_crc32_options(False) writes CRC 0 for every record; ember reads it."""
    state = {"w": torch_mod.arange(6.0).view(2, 3), "n": 3}
    buf = io.BytesIO()
    torch_mod.serialization.set_crc32_options(False)
    try:
        torch_mod.save(state, buf)
    finally:
        torch_mod.serialization.set_crc32_options(True)
    buf.seek(0)
    loaded = es.load(buf)
    assert loaded["n"] == 3 and loaded["w"].tolist() == state["w"].tolist()
