"""nn.functional, split by concern; ember/nn/functional.py re-exports everything."""
