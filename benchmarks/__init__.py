"""Side-by-side benchmarks of dynsim (ratios measured in one run); `python benchmarks/run.py` writes
docs/benchmarks.md."""
