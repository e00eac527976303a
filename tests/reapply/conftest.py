"""Fixtures shared by the tests of one area:
tether reapply (src/tether/flows/reapply).
"""
