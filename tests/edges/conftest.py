"""Fixtures shared by the tests of one area:
the edge modules: processes, git, the file system (src/tether/*.py).
"""
