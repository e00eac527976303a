"""Fixtures shared by the tests of one area:
the benchmark scripts in bench/ (their command lines; speed itself is never timed here)."""
