"""PyTorch's zip checkpoint layout: <archive>/data.pkl, data/<key> storages (aligned to 64
bytes), version, byteorder and format records."""
import os
import struct

import numpy as np

# NOTE: zipfile (4 ms on its own, two more modules after `import ember`) is imported where
# used, not by `import ember`.

ALIGNMENT = 64
_LOCAL_HEADER = 30


def archive_name(f):
    """PyTorch names the archive folder after the file (without extension), else 'archive'."""
    if isinstance(f, (str, os.PathLike)):
        base = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        return base or "archive"
    return "archive"


class CheckpointWriter:
    """Writes records uncompressed, padding each local header so data starts aligned."""

    def __init__(self, fileobj, prefix):
        import zipfile   # (deferred: see the NOTE at the top)
        self.zip = zipfile.ZipFile(fileobj, "w", zipfile.ZIP_STORED, allowZip64=True)
        self.prefix = prefix
        self.fileobj = fileobj

    def write(self, name, data):
        import zipfile   # (deferred: see the NOTE at the top)
        info = zipfile.ZipInfo(f"{self.prefix}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        view = None
        if not isinstance(data, (bytes, str)):
            # NOTE: raw storage bytes go in without a copy; empty ones as b"".
            view = memoryview(data.reshape(-1).view("uint8")) if data.size else b""
        raw = data.encode() if isinstance(data, str) else data
        size = len(view) if view is not None else len(raw)
        start = self.zip.fp.tell() if hasattr(self.zip, "fp") else 0
        name_len = len(info.filename.encode("utf-8"))
        zip64 = size > 0x7FFFFFFF
        extra_zip64 = 20 if zip64 else 0
        pad = (-(start + _LOCAL_HEADER + name_len + extra_zip64 + 4)) % ALIGNMENT
        info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
        with self.zip.open(info, "w", force_zip64=zip64) as out:
            out.write(view if view is not None else raw)

    def close(self):
        self.zip.close()


class CheckpointReader:
    """Reads records from a checkpoint zip (any archive folder name)."""

    def __init__(self, fileobj):
        import zipfile   # (deferred: see the NOTE at the top)
        try:
            self.zip = zipfile.ZipFile(fileobj)
        except zipfile.BadZipFile as exc:
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: {exc} (the "
                               "file is not a checkpoint, or it is truncated)") from None
        self.fileobj = fileobj
        names = self.zip.namelist()
        pkl = [n for n in names if n.endswith("data.pkl") and n.count("/") == 1]
        if not pkl:
            raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not "
                               "found (the zip archive is not a checkpoint)")
        self.prefix = pkl[0].rsplit("/", 1)[0]

    def has(self, name):
        try:
            self.zip.getinfo(f"{self.prefix}/{name}")
            return True
        except KeyError:
            return False

    def read(self, name):
        import zipfile   # (deferred: see the NOTE at the top)
        info = self._info(name)
        if info.compress_type == zipfile.ZIP_STORED and info.CRC == 0 and info.file_size:
            # NOTE: PyTorch writes a CRC of 0 when saved under set_crc32_options(False);
            # zipfile would reject the record, so it is read straight from its offset.
            self.fileobj.seek(self.record_offset(name))
            data = self.fileobj.read(info.file_size)
            if len(data) != info.file_size:
                raise RuntimeError(f"record {name} ended early: the checkpoint is truncated")
            return data
        return self.zip.read(info)

    def _info(self, name):
        try:
            return self.zip.getinfo(f"{self.prefix}/{name}")
        except KeyError:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not "
                               "found (the checkpoint is missing a record)") from None

    def read_array(self, name, dtype, numel):
        """The storage record as a writable 1-D array of `numel` elements of `dtype`."""
        import zipfile   # (deferred: see the NOTE at the top)
        info = self._info(name)
        nbytes = numel * np.dtype(dtype).itemsize
        if info.file_size < nbytes:
            raise RuntimeError(f"storage record {name} holds {info.file_size} bytes but "
                               f"{numel} elements of {np.dtype(dtype).name} need {nbytes}: "
                               "the checkpoint is truncated or corrupt")
        buf = bytearray(nbytes)
        if info.compress_type == zipfile.ZIP_STORED:
            # NOTE: stored records are read straight from the file at their offset, without
            # zipfile's chunked reads and CRC pass: loading is then as fast as the disk.
            self.fileobj.seek(self.record_offset(name))
            got = self.fileobj.readinto(buf)
        else:
            with self.zip.open(info) as fp:
                got = fp.readinto(buf)
        if got != nbytes:
            raise RuntimeError(f"storage record {name} ended early: the checkpoint is "
                               "truncated")
        return np.frombuffer(buf, dtype=dtype, count=numel)

    def record_offset(self, name):
        """Byte offset of a record's data in the file (for mmap)."""
        info = self._info(name)
        self.fileobj.seek(info.header_offset)
        header = self.fileobj.read(_LOCAL_HEADER)
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        return info.header_offset + _LOCAL_HEADER + name_len + extra_len


def is_zipfile(f):
    start = f.tell()
    magic = f.read(4)
    f.seek(start)
    return magic == b"PK\x03\x04"


