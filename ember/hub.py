"""ember.hub (torch.hub) without a network: models and weights come from the local cache.

The cache is PyTorch's own ($TORCH_HOME/hub, else $XDG_CACHE_HOME/torch/hub, else
~/.cache/torch/hub), so files PyTorch downloaded are found. Anything missing raises an error
naming the file ember looked for, so it can be copied there by hand.
"""
import hashlib
import importlib.util
import os
import re
import sys
from urllib.parse import urlparse

from .serialization import load as ember_load

__all__ = ["get_dir", "set_dir", "load", "list", "help", "load_state_dict_from_url",
           "download_url_to_file"]

ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
MODULE_HUBCONF = "hubconf.py"
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_hub_dir = None
_builtin_list = list


def get_dir():
    """The hub cache directory (set_dir's, else PyTorch's default)."""
    if _hub_dir is not None:
        return _hub_dir
    torch_home = os.path.expanduser(os.getenv(
        ENV_TORCH_HOME,
        os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")))
    return os.path.join(torch_home, "hub")


def set_dir(d):
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def _parse_repo(github):
    if ":" in github:
        repo_info, ref = github.split(":", 1)
    else:
        repo_info, ref = github, None
    owner, name = repo_info.split("/")
    return owner, name, ref


def _cached_repo(github):
    """The directory PyTorch's hub unpacks `owner/name[:ref]` into, if it is there."""
    owner, name, ref = _parse_repo(github)
    hub = get_dir()
    refs = [ref] if ref else ["main", "master"]
    for r in refs:
        path = os.path.join(hub, "_".join([owner, name, r.replace("/", "_")]))
        if os.path.isdir(path):
            return path
    raise RuntimeError(
        f"ember.hub works offline and the repo '{github}' is not in the cache: looked for "
        f"{os.path.join(hub, '_'.join([owner, name, refs[0]]))}. Download it with PyTorch "
        "or unpack it there (or pass source='local' with a directory).")


def _import_hubconf(repo_dir):
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"Cannot find {MODULE_HUBCONF} in {repo_dir}")
    sys.path.insert(0, repo_dir)
    try:
        spec = importlib.util.spec_from_file_location("hubconf", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(repo_dir)
    return module


def _repo_dir(repo_or_dir, source):
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    return repo_or_dir if source == "local" else _cached_repo(repo_or_dir)


def _entry(module, model):
    fn = getattr(module, model, None)
    if fn is None or not callable(fn):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return fn


def list(github, force_reload=False, skip_validation=False, trust_repo=None, verbose=True):
    module = _import_hubconf(_cached_repo(github))
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo=None):
    return _entry(_import_hubconf(_cached_repo(github)), model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo=None, force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """Call `model` from the repo's hubconf.py (a cached GitHub repo or a local directory)."""
    module = _import_hubconf(_repo_dir(repo_or_dir, source))
    return _entry(module, model)(*args, **kwargs)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    raise RuntimeError(f"ember.hub works offline: cannot download {url}. Copy the file to "
                       f"{dst} by hand.")


def _check_hash(path, prefix):
    sha = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            sha.update(chunk)
    digest = sha.hexdigest()
    if not digest.startswith(prefix):
        raise RuntimeError(f'invalid hash value (expected "{prefix}", got "{digest}")')


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    """Load the checkpoint `url` names from `<hub>/checkpoints/` (never from the network)."""
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    filename = file_name or os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        raise RuntimeError(
            f"ember.hub works offline: {url} is not in the cache. Looked for {cached_file}; "
            "download the file there (e.g. with PyTorch, or curl) and run again.")
    if check_hash:
        match = HASH_REGEX.search(filename)
        if match:
            _check_hash(cached_file, match.group(1))
    return ember_load(cached_file, map_location=map_location, weights_only=weights_only)


class _Faketqdm:
    """The progress bar used when the tqdm package is absent: percent (or bytes, without a
    total) written to stderr."""

    def __init__(self, total=None, disable=False, unit=None, *args, **kwargs):
        self.total = total
        self.disable = disable
        self.n = 0

    def update(self, n):
        if self.disable:
            return
        self.n += n
        if self.total is None:
            sys.stderr.write(f"\r{self.n:.1f} bytes")
        else:
            sys.stderr.write(f"\r{100 * self.n / float(self.total):.1f}%")
        sys.stderr.flush()

    def set_description(self, *args, **kwargs):
        pass   # (a description needs the real tqdm)

    def write(self, s):
        sys.stderr.write(f"{s}\n")

    def close(self):
        self.disable = True

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.disable:
            sys.stderr.write("\n")


def __getattr__(name):
    # `tqdm` is tqdm.auto's when the package is installed (imported on first use, not with
    # ember.hub), else the plain stand-in above, as in torch.hub.
    if name == "tqdm":
        try:
            from tqdm.auto import tqdm   # (optional: tqdm)
        except ImportError:
            tqdm = _Faketqdm
        return tqdm
    raise AttributeError(f"module 'ember.hub' has no attribute '{name}'")
