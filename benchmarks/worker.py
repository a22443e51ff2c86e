"""Runs one workload on one library in this process and prints a JSON line."""
import argparse
import importlib
import json
import os
import resource
import sys

sys.path.insert(0, os.path.dirname(__file__))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lib", choices=["ember", "torch"], required=True)
    p.add_argument("--workload", required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    lib = importlib.import_module(args.lib)
    if hasattr(lib, "set_num_threads"):
        lib.set_num_threads(args.threads)
    from workloads import WORKLOADS
    fn = WORKLOADS[args.workload]
    try:
        value, unit, higher = fn(lib, args.quick)
        result = {"value": value, "unit": unit, "higher_is_better": higher}
        import workloads
        if workloads.first_call[0] is not None:
            result["first_call_ms"] = workloads.first_call[0] * 1e3
    except (AttributeError, ImportError, NotImplementedError) as exc:
        # NOTE: a feature the library does not have yet; reported, not hidden.
        result = {"missing": f"{type(exc).__name__}: {exc}"}
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


if __name__ == "__main__":
    main()
