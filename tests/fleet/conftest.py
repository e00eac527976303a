"""Fixtures shared by the tests of one area:
tether fleet and projects, and the runs they share (src/tether/fleet, runs).
"""
