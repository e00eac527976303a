"""Fixtures shared by the tests of one area:
tether deps (src/tether/deps).
"""
