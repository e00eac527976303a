"""Fixtures shared by the tests of one area:
the rules the whole code base and its documents are held to.
"""
