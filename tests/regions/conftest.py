"""Fixtures shared by the tests of one area:
generated regions: the engine, regeneration, status and compare.
"""
