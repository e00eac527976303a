"""Fixtures shared by the tests of one area:
release sources: shelves, tarballs, git, caches (src/tether/sources).
"""
