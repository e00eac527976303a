"""tether's benchmarks: ``python -m bench`` (see bench/run.py). Never part of the test suite."""
