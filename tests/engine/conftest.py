"""Fixtures shared by the tests of one area:
the pure engines: merges, diffs, structured files, changelogs (src/tether/engine).
"""
