"""Fixtures shared by the tests of one area:
manifests and releases as data (src/tether/model).
"""
