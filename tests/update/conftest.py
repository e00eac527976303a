"""Fixtures shared by the tests of one area:
tether update (src/tether/flows/update.py).
"""
