"""Fixtures shared by the tests of one area:
hostile releases, records and trees against every command (docs/security.md).
"""
