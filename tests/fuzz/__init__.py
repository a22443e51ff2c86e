"""The differential fuzzer (issue 22): ember against real PyTorch on random, mostly invalid,
argument lists. generate.py draws the calls, run.py runs and compares them, allowlist.py
holds the known disagreements with their reasons, test_fuzz.py is the quick seeded round."""
