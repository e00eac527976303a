"""A titled listing of paths, cut at ``LIST_LIMIT`` lines unless ``--all``: one shape for
every report that names files."""

from __future__ import annotations

from tether.report.printable import one_line

LIST_LIMIT = 20  # lines per listing unless --all


def listing(title: str, paths: list[str], limit: int | None = LIST_LIMIT) -> list[str]:
    if not paths:
        return []
    lines = [f"{one_line(title)} ({len(paths)}):"]
    shown = paths if limit is None else paths[:limit]
    lines += [f"  {one_line(p)}" for p in shown]
    if len(paths) > len(shown):
        lines.append(f"  … and {len(paths) - len(shown)} more (--all lists every one)")
    return lines
