"""Small helpers torch's namespace re-exports from its internal utilities: get_file_path
(a path under the directory that holds the package), prepare_multiprocessing_environment
(a hook PyTorch's open-source build leaves empty), thread_safe_generator and the
classproperty decorator."""
import os

__all__ = ["get_file_path", "prepare_multiprocessing_environment", "thread_safe_generator",
           "classproperty"]

_SITE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def get_file_path(*path_components):
    """`path_components` joined under the directory holding the ember package (torch's
    answer is relative to its own site-packages directory the same way)."""
    return os.path.join(_SITE, *path_components)


def prepare_multiprocessing_environment(path):
    """Nothing to prepare: as in PyTorch's open-source build, worker processes need no
    environment set up beforehand."""
    return None


def thread_safe_generator():
    """The generator private to the current thread, or None when the thread uses the
    default generator (ember keeps no per-thread generators, so always None)."""
    return None


class classproperty:
    """A read-only property evaluated on the class (`Cls.name` and `obj.name` both call
    `func(Cls)`)."""

    def __init__(self, func):
        self.fget = func if isinstance(func, (classmethod, staticmethod)) else \
            classmethod(func)

    def __get__(self, instance, owner=None):
        return self.fget.__get__(instance, owner or type(instance))()
