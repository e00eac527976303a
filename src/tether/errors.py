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
# Commander's source-untouched check reads any non-zero exit as "the tree changed"; 3 (not
# its 1) lets a caller tell a change from a snapshot that could not be read (docs/deps.md).
SNAPSHOT_CHANGED = Exit.FOUND

# Any command can end with these: done, an error, a wrong command line, an interrupt.
EVERY_COMMAND: frozenset[Exit] = frozenset({Exit.OK, Exit.ERROR, Exit.USAGE, Exit.INTERRUPTED})
_FOUND = frozenset({Exit.FOUND})
_CONFLICTS = frozenset({Exit.CONFLICTS})
_BOTH = _FOUND | _CONFLICTS
_NEITHER: frozenset[Exit] = frozenset()
# What each command can end with besides ``EVERY_COMMAND`` (docs/cli.md, "Exit codes per
# command", is this table). The entry point refuses a code outside its command's row when
# ``TETHER_CHECK_EXITS`` is set, as the test suite does: every run the tests make checks it.
COMMAND_EXITS: dict[str, frozenset[Exit]] = {
    "init": _NEITHER,
    "status": _NEITHER,
    "check": _FOUND,
    "diff": _FOUND,
    "own": _NEITHER,
    "update": _BOTH,
    "refresh": _BOTH,
    "migrations": _CONFLICTS,
    "pr": _NEITHER,
    "changelog": _NEITHER,
    "reapply": _CONFLICTS,
    "merge-fields": _CONFLICTS,
    "merge-driver": _CONFLICTS,
    "verify": _FOUND,
    "region-compare": _NEITHER,
    "manifest build": _FOUND,
    "release pack": _NEITHER,
    "snapshot": _NEITHER,
    "snapshot check": _FOUND,
    "projects add": _NEITHER,
    "projects list": _NEITHER,
    "projects show": _NEITHER,
    "projects remove": _NEITHER,
    "fleet status": _NEITHER,
    "fleet update": _CONFLICTS,
    "deps scan": _NEITHER,
    "deps plan": _NEITHER,
    "deps apply": _NEITHER,
    "deps notes": _NEITHER,
    "deps dossier": _NEITHER,
    "campaign start": _NEITHER,
    "campaign run": _CONFLICTS,
    "campaign status": _NEITHER,
    "campaign push": _CONFLICTS,
    "campaign pr": _BOTH,
    "campaign retry": _CONFLICTS,
    "campaign close": _NEITHER,
    "audit scope": _NEITHER,
    "audit shell": _FOUND,
    "audit findings write": _NEITHER,
    "audit digest": _NEITHER,
    "audit clear": _NEITHER,
    "audit gate": _FOUND,
    "demo": _NEITHER,
    "completion": _NEITHER,
}


def command_exits(command: str) -> frozenset[Exit]:
    """Every code ``command`` ("audit findings write") can end with."""
    return EVERY_COMMAND | COMMAND_EXITS.get(command, _NEITHER)


class TetherError(Exception):
    """A problem with the user's input or environment: one line, exit 1, nothing written."""

    exit_code: int = Exit.ERROR


class UsageError(TetherError):
    """The command line itself is wrong: exit 2."""

    exit_code = Exit.USAGE
