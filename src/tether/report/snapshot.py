"""The words of ``tether snapshot`` and ``tether snapshot check``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tether.flows.snapshot import Checked, Recorded


def render_recorded(recorded: Recorded) -> str:
    return f"recorded {recorded.files} file(s) of {recorded.root} in {recorded.out}"


def render_checked(checked: Checked) -> str:
    """One line per change, the allowed ones marked; a verdict line when none is outside."""
    lines = [f"{item['change']}: {item['path']}" for item in checked.changed]
    lines += [f"{item['change']} (allowed): {item['path']}" for item in checked.allowed]
    if not checked.changed:
        lines.append("unchanged" if not checked.allowed else "only allowed paths changed")
    return "\n".join(lines)
