"""Errors a user can cause, and the one table of exit codes every command ends with.

The CLI turns a ``TetherError`` into one line on stderr and its exit code.
"""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    """How a command ended (docs/cli.md, "Exit codes"); every command returns one of these."""

    OK = 0  # done, and clean
    ERROR = 1  # an error stopped the run (or a step of it failed)
    USAGE = 2  # the command line is wrong
    FOUND = 3  # found something a person must look at: drift, findings, pending work
    CONFLICTS = 4  # finished, but left conflicts for a person
    INTERRUPTED = 130  # stopped by Ctrl-C or SIGTERM, as a shell reports it


# Commands that answer a yes/no question for another program, whose contract says only
# "non-zero means no", answer from the table, so a caller can still tell "no" from an error
# (docs/cli.md, "Exit codes"). git reads any non-zero exit of a merge driver as "conflicts
# left in the file".
MERGE_DRIVER_CONFLICTS = Exit.CONFLICTS
# A reapply workflow runs ``tether verify`` after its merge and stops on any non-zero exit.
VERIFY_LINES_LOST = Exit.FOUND
# Commander's source-untouched check fixes 1 for "the tree changed since the snapshot".
SNAPSHOT_CHANGED = Exit.ERROR


class TetherError(Exception):
    """A problem with the user's input or environment: one line, exit 1, nothing written."""

    exit_code: int = Exit.ERROR


class UsageError(TetherError):
    """The command line itself is wrong: exit 2."""

    exit_code = Exit.USAGE
