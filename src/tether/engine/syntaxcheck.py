"""Whether a JSON, YAML or TOML text still parses after a line merge. Pure.

A line merge can be clean and still wrong for structured text: both sides adding the
same key in different places leaves it twice (git merge-file calls that clean).
"""

from __future__ import annotations


def structured_problem(path: str, data: bytes) -> str | None:
    """Why ``data`` is not a valid document of the format ``path``'s extension names
    (duplicate keys included); None when it is, or when the path is not JSON/YAML/TOML."""
    from tether.engine.structured.formats import ParseProblem, decode, format_for_path, parse

    fmt = format_for_path(path)
    if fmt is None:
        return None
    try:
        parse(fmt, decode(data).body)
    except ParseProblem as problem:
        message = str(problem)
        # A top-level list or scalar is a valid document, just not one with keys.
        return None if message.startswith("the top level is") else message
    return None


def merge_breaks_syntax(
    path: str, base: bytes, ours: bytes, theirs: bytes, merged: bytes
) -> str | None:
    """The merged text's problem when all three inputs were valid documents; else None."""
    if any(structured_problem(path, side) for side in (base, ours, theirs)):
        return None
    return structured_problem(path, merged)
