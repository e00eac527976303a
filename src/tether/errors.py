"""Errors a user can cause. The CLI turns them into one line on stderr and an exit code."""

from __future__ import annotations


class TetherError(Exception):
    """A problem with the user's input or environment: one line, exit 1, nothing written."""

    exit_code = 1


class UsageError(TetherError):
    """The command line itself is wrong: exit 2."""

    exit_code = 2
