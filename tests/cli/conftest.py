"""Fixtures shared by the tests of one area:
the command line's front and what every command shares (src/tether/cli).
"""
