"""Fixtures shared by the tests of one area:
tether audit (src/tether/audit).
"""
