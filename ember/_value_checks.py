"""Functions that read tensor values in Python only to raise PyTorch's error for bad input
(an index out of range), never to choose what to compute.

ember.compile treats a tensor value read in Python as a graph break: the value could steer
the code that follows, which a replay does not run. A function marked here runs unrecorded
under a capture instead (`suspend`, set by the capture): its reads are no break, and the
replay skips its check (the replayed kernel still fails on an out-of-range index, with
NumPy's IndexError)."""
import functools

suspend = None   # set by a running capture: suspend(fn, args, kwargs) runs fn unrecorded


def check_only(fn):
    """Mark `fn` as reading tensor values only to validate them."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        if suspend is None:
            return fn(*args, **kwargs)
        return suspend(fn, args, kwargs)
    return run
