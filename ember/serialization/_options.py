"""torch.serialization's global options, read by ember's save and load:
the byte order assumed for checkpoints without a byteorder record, the mmap flags of
`load(mmap=True)`, CRC-32 computation, and `skip_data` (save without storage bytes)."""
import enum
import mmap as _mmap


class LoadEndianness(enum.Enum):
    NATIVE = 1
    LITTLE = 2
    BIG = 3


LoadEndianness.__module__ = "ember.serialization"


class _Options:
    load_endianness = None
    mmap_flags = _mmap.MAP_PRIVATE
    compute_crc32 = True
    skip_data = None   # the open skip_data context, if any


options = _Options()


def get_default_load_endianness():
    """The byte order assumed for checkpoints that carry no byteorder record (None: native)."""
    return options.load_endianness


def set_default_load_endianness(endianness):
    if endianness is not None and not isinstance(endianness, LoadEndianness):
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    options.load_endianness = endianness


def file_is_big_endian(recorded):
    """Whether a checkpoint's storages are big-endian: its byteorder record ('little'/'big'),
    else the default load endianness."""
    if recorded is not None:
        return recorded.strip() == "big"
    return options.load_endianness is LoadEndianness.BIG


def get_default_mmap_options():
    """The flags `load(mmap=True)` maps files with (mmap.MAP_PRIVATE or mmap.MAP_SHARED)."""
    return options.mmap_flags


class set_default_mmap_options:
    """Context manager (or plain call) setting the mmap flags of `load(mmap=True)`:
    MAP_SHARED writes changes to loaded tensors back into the file, MAP_PRIVATE does not."""

    def __init__(self, flags):
        if flags != _mmap.MAP_PRIVATE and flags != _mmap.MAP_SHARED:
            raise ValueError("Invalid argument in function set_default_mmap_options, expected "
                             f"mmap.MAP_PRIVATE or mmap.MAP_SHARED, but got {flags}")
        self.prev = options.mmap_flags
        options.mmap_flags = flags

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        options.mmap_flags = self.prev


def get_crc32_options():
    return options.compute_crc32


def set_crc32_options(compute_crc32):
    """Whether save computes the CRC-32 of each record. NOTE: ember's zip writer always
    computes it (the files stay valid for every reader); the flag is kept for get_."""
    options.compute_crc32 = bool(compute_crc32)


class skip_data:
    """Inside, `save` writes the checkpoint's structure with zero bytes in place of every
    storage's data (sizes and layout kept), e.g. to lay out a file to fill in later."""

    def __init__(self, materialize_fake_tensors=False):
        self.materialize_fake_tensors = materialize_fake_tensors

    def __enter__(self):
        self._prev = options.skip_data
        options.skip_data = self
        return self

    def __exit__(self, *exc):
        options.skip_data = self._prev
