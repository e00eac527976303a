"""Fixtures shared by the tests of one area:
tether manifest build and release pack (src/tether/publish).
"""
