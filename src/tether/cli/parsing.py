"""The command line's parser: tether's own error lines, and a suggestion for a typo.

argparse prints its errors itself and exits; tether's parser raises ``CommandLineError``
instead, so ``cli/main.py`` reports every error the same way (one line on stderr, and a
JSON document with ``--json``). The parser that failed is the one whose usage is shown: a
bad flag of ``tether update`` shows the usage of ``tether update``, not of ``tether``.
"""

from __future__ import annotations

import argparse
import os
import sys

from tether.cli.usage_errors import CommandLineError, closest

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which `tether --help` pays
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, NoReturn

# Where a parse leaves the innermost (sub)command parser it went through.
ACTIVE_PARSER = "_active_parser"
# Set on an action that refuses a removed spelling (``cli/common.add_removed``): completion and
# the typo suggestions leave it out (docs/cli.md, "Removed spellings").
REMOVED = "removed_spelling"


# Where the words given to a command that takes none are collected (``add_removed``).
STRAY_WORDS = "_stray_words"


def is_removed(action: argparse.Action) -> bool:
    return getattr(action, REMOVED, None) is not None


class Parser(argparse.ArgumentParser):
    """argparse with errors raised, not printed; sub-parsers are made of this class too.

    A flag is taken only as spelled: argparse's prefix matching (``--dry`` for ``--dry-run``)
    is off on every parser, so a shortened or mistyped flag gets the suggestion of
    ``unrecognized`` instead of running as a guess, and a new flag can never change what an
    old shortening meant."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes a formatter for every argument added (to check its metavar); left
        # to itself each one imports shutil (and bz2, lzma, zlib with it, ~2 ms) to ask the
        # terminal's width, which a run that prints no help never needs.
        if self.formatter_class is not argparse.HelpFormatter:
            return super()._get_formatter()
        return argparse.HelpFormatter(self.prog, width=terminal_columns() - 2)

    def error(self, message: str) -> NoReturn:
        raise CommandLineError(self.prog, message, self.format_usage())

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        # A sub-parser runs inside its parent's parse and its namespace is copied over the
        # parent's afterwards: the innermost parser is the last one written here.
        namespace = argparse.Namespace() if namespace is None else namespace
        setattr(namespace, ACTIVE_PARSER, self)
        try:
            parsed = super().parse_known_args(args, namespace)
        except CommandLineError:
            # A missing required flag: a stray word (the old project folder) is the better
            # thing to point at, unless a flag was mistyped.
            self._refuse_stray_words(namespace, args or ())
            raise
        if not any(extra.startswith("-") for extra in parsed[1]):
            self._refuse_stray_words(namespace, args or ())
        return parsed

    def _refuse_stray_words(self, namespace: argparse.Namespace, args: Sequence[str]) -> None:
        """Words given to a command that takes none (``cli/common.add_removed``): one line
        saying what to write instead, unless an unknown flag was given (its mistyped name,
        not its value, is the error then)."""
        words = getattr(namespace, STRAY_WORDS, None)
        collector = next((a for a in self._actions if a.dest == STRAY_WORDS), None)
        if not words or collector is None:
            return
        known = self._option_string_actions
        flags = args[: args.index("--")] if "--" in args else args
        if any(arg.startswith("-") and arg.split("=", 1)[0] not in known for arg in flags):
            return
        instead = getattr(collector, "instead", "")
        raise CommandLineError(self.prog, f"unexpected argument {words[0]!r}: {instead}")

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as error:
            hint = closest(str(value), action.choices or ())
            if hint is None:
                raise
            message = f"{error.message}; did you mean {hint!r}?"
            raise argparse.ArgumentError(action, message) from None


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns`` (``COLUMNS`` when set, else the terminal's,
    else 80), without importing shutil."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


def unrecognized(parser: argparse.ArgumentParser, extras: list[str]) -> CommandLineError:
    """The error for arguments no parser took, a flag's closest spelling suggested."""
    flags = [
        flag
        for action in parser._actions
        if not is_removed(action)
        for flag in action.option_strings
    ]
    hints = []
    for extra in extras:
        if extra.startswith("-"):
            hint = closest(extra.split("=", 1)[0], flags)
            if hint is not None:
                hints.append(hint)
    shown = ", ".join(e if e.startswith("-") else repr(e) for e in extras)
    message = f"unrecognized argument{'s' if len(extras) > 1 else ''} {shown}"
    if hints:
        message += f"; did you mean {', '.join(hints)}?"
    return CommandLineError(parser.prog, message, parser.format_usage())


def add_global_flags(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    """``-q/--quiet``, ``-v/--verbose`` and ``--no-color`` on ``parser`` and every sub-parser
    below it, so each is taken before the command (``tether -q update``) and after it
    (``tether update -q``). Below the top their defaults are left unset: a sub-parser's
    namespace is copied over its parent's, and a default there would undo a flag given
    before the command."""
    for spellings, help_text in GLOBAL_FLAGS:
        parser.add_argument(
            *spellings,
            action="store_true",
            default=False if top else argparse.SUPPRESS,
            help=help_text,
        )
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in {id(p): p for p in action.choices.values()}.values():
                add_global_flags(sub)


# The flags every (sub)command takes, with their help (what they do: docs/cli.md).
GLOBAL_FLAGS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("-q", "--quiet"), "draw no progress on stderr"),
    (
        ("-v", "--verbose"),
        "say on stderr which folder is used, how long the run took, and "
        "the traceback behind an error",
    ),
    (("--no-color",), "no colour or redrawn lines, even on a terminal"),
)


class RemovedSpelling(argparse.Action):
    """Refuses a spelling tether no longer takes, in one line saying what to write instead;
    it takes an optional value so that ``--root x`` and ``--root=x`` get the same line."""

    def __init__(self, option_strings: list[str], dest: str, instead: str, **_: Any) -> None:
        super().__init__(
            option_strings, dest, nargs="?", default=argparse.SUPPRESS, help=argparse.SUPPRESS
        )
        self.instead = instead

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        raise CommandLineError(parser.prog, f"{option_string} was removed; {self.instead}")


class NameList(argparse.Action):
    """``--projects a,b --projects c`` → ``["a", "b", "c"]``: every value is split at commas,
    blanks dropped, the first spelling of a repeated name kept (``runs.selection.split_names``,
    the rule the prompts use too)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        from tether.runs.selection import split_names

        earlier = getattr(namespace, self.dest, None) or []
        setattr(namespace, self.dest, split_names([*earlier, str(values)]))
