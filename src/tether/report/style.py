"""Whether a stream is a terminal, and whether output may be decorated (colour, a line
redrawn in place): the one rule every coloured or redrawn output follows (docs/cli.md).

Decoration needs a terminal and is off when ``--no-color`` is given, ``NO_COLOR`` is set
to anything but the empty string (<https://no-color.org>) or ``TERM=dumb``.
Standard library only: imported on every run that has a terminal.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing itself costs start-up time every run pays
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import TextIO


def is_terminal(stream: TextIO) -> bool:
    """``stream`` is a terminal; a replaced or closed stream is not."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def plain_requested(environ: Mapping[str, str], no_color: bool = False) -> bool:
    """The person asked for undecorated output, or the terminal cannot show it."""
    return no_color or bool(environ.get("NO_COLOR")) or environ.get("TERM") == "dumb"


def colour_wanted(stream: TextIO, environ: Mapping[str, str], no_color: bool = False) -> bool:
    """Colour ``stream``'s output: a terminal, and nobody asked for plain output."""
    return is_terminal(stream) and not plain_requested(environ, no_color)
