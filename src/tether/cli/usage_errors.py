"""The error a wrong command line raises, and the suggestion for a typo.

Without argparse: the entry point catches ``CommandLineError`` on every run, and a run of
``status`` or ``check`` whose command line ``cli/plain_argv.py`` reads never imports argparse.
"""

from __future__ import annotations

from tether.errors import UsageError

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which every command pays
if TYPE_CHECKING:
    from collections.abc import Iterable


class CommandLineError(UsageError):
    """argparse found the command line wrong (exit 2)."""

    def __init__(self, prog: str, message: str, usage: str = "") -> None:
        super().__init__(message)
        self.prog = prog
        self.usage = usage  # the failing (sub)command's usage lines, "" for none

    @property
    def line(self) -> str:
        return f"{self.prog}: {self}"


def closest(word: str, choices: Iterable[object]) -> str | None:
    """The one of ``choices`` a mistyped ``word`` most likely meant, or None."""
    import difflib

    names = [str(choice) for choice in choices]
    close = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    return close[0] if close else None


def unknown_command(word: str, commands: Iterable[str]) -> CommandLineError:
    hint = closest(word, commands)
    advice = f"did you mean {hint!r}?" if hint else "see 'tether --help' for the commands"
    return CommandLineError("tether", f"unknown command {word!r}; {advice}")
