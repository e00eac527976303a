"""Fixtures shared by the tests of one area:
tether refresh.
"""
