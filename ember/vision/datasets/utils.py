"""File checks, extraction and downloading for the dataset readers.

NOTE: ember checks that a dataset's files exist but does not verify their MD5 sums, so that
files written by other tools (or by tests) in the right format load as torchvision's would.
"""
import bz2
import gzip
import hashlib
import lzma
import os
import tarfile
import urllib.error
import urllib.request
import zipfile

_TIMEOUT = 30


def check_integrity(fpath, md5=None):
    if not os.path.isfile(fpath):
        return False
    if md5 is None:
        return True
    return calculate_md5(fpath) == md5


def calculate_md5(fpath, chunk_size=1024 * 1024):
    digest = hashlib.md5(usedforsecurity=False)
    with open(fpath, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _urlopen(url):
    """One place that touches the network (tests replace it)."""
    request = urllib.request.Request(url, headers={"User-Agent": "ember"})
    return urllib.request.urlopen(request, timeout=_TIMEOUT)


def download_url(url, root, filename=None, md5=None):
    """Download `url` to root/filename unless a file is already there."""
    root = os.path.expanduser(root)
    filename = filename or os.path.basename(url)
    fpath = os.path.join(root, filename)
    os.makedirs(root, exist_ok=True)
    if check_integrity(fpath, md5):
        return
    partial = fpath + ".partial"
    with _urlopen(url) as response, open(partial, "wb") as out:
        for chunk in iter(lambda: response.read(1024 * 1024), b""):
            out.write(chunk)
    os.replace(partial, fpath)
    if not check_integrity(fpath, md5):
        raise RuntimeError("File not found or corrupted.")


def extract_archive(from_path, to_path=None, remove_finished=False):
    """Unpack .tar(.gz/.bz2/.xz), .zip, or decompress .gz/.bz2/.xz; returns to_path."""
    to_path = to_path or os.path.dirname(from_path)
    name = from_path.lower()
    if name.endswith((".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz", ".tar.xz", ".txz")):
        with tarfile.open(from_path) as archive:
            archive.extractall(to_path, filter="data")
    elif name.endswith(".zip"):
        with zipfile.ZipFile(from_path) as archive:
            archive.extractall(to_path)
    else:
        opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}[os.path.splitext(name)[1]]
        target = os.path.join(to_path, os.path.basename(os.path.splitext(from_path)[0]))
        with opener(from_path, "rb") as src, open(target, "wb") as dst:
            dst.write(src.read())
    if remove_finished:
        os.remove(from_path)
    return to_path


def download_and_extract_archive(url, download_root, extract_root=None, filename=None,
                                 md5=None, remove_finished=False):
    download_root = os.path.expanduser(download_root)
    extract_root = extract_root or download_root
    filename = filename or os.path.basename(url)
    download_url(url, download_root, filename, md5)
    extract_archive(os.path.join(download_root, filename), extract_root, remove_finished)


def fetch_or_explain(name, urls, folder, files, fetch):
    """Run `fetch(url)` for each mirror until one works; with no network, raise an error that
    says which files to place where so the dataset loads without downloading."""
    errors = []
    for url in urls:
        try:
            fetch(url)
            return
        except (urllib.error.URLError, OSError) as error:
            errors.append(f"{url}: {error}")
    listing = "\n".join(f"    {os.path.join(folder, f)}" for f in files)
    raise RuntimeError(
        f"Could not download {name} (no network?). Tried:\n    " + "\n    ".join(errors)
        + f"\nDownload the files elsewhere and put them here (the folder layout is "
        f"torchvision's):\n{listing}")


def verify_str_arg(value, arg=None, valid_values=None, custom_msg=None):
    if not isinstance(value, str):
        msg = "Expected type str" + ("" if arg is None else f" for argument {arg}")
        raise ValueError(f"{msg}, but got type {type(value)}.")
    if valid_values is None:
        return value
    if value not in valid_values:
        if custom_msg is not None:
            raise ValueError(custom_msg)
        listing = ", ".join(repr(v) for v in valid_values)
        raise ValueError(f"Unknown value '{value}' for argument {arg}. "
                         f"Valid values are {{{listing}}}.")
    return value
