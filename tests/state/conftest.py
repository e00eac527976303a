"""Fixtures shared by the tests of one area:
the state folder: journal, lock, store, caches (src/tether/state).
"""
