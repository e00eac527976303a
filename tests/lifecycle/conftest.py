"""Fixtures shared by the tests of one area:
release lifecycles, migrations and the GAIA profile (src/tether/profiles).
"""
