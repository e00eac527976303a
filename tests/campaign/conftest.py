"""Fixtures shared by the tests of one area:
tether campaign (src/tether/campaign).
"""
