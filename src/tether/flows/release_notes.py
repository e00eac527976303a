"""What a person reads before confirming an update: the release notes between B and L
and the follow-ups they ask for that still apply to this project."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tether.fsio import read_bytes

if TYPE_CHECKING:  # the parser is imported only when a release ships a changelog
    from tether.engine.changelog import AdopterAction, Section


@dataclass
class ReleaseNotes:
    sections: list[Section] = field(default_factory=list)
    actions: list[AdopterAction] = field(default_factory=list)


def release_notes(project_root: Path, changelog: Path, installed: str, target: str) -> ReleaseNotes:
    """Sections strictly newer than ``installed`` up to ``target``, read from the new
    release's changelog; none when it has no changelog or a version does not parse."""
    try:
        text = read_bytes(changelog).decode("utf-8", "replace")
    except OSError:
        return ReleaseNotes()
    from tether.engine.changelog import adopter_actions, applicable_actions, sections_between
    from tether.flows.changelog import project_presence

    try:
        sections = sections_between(text, installed, target)
    except (OSError, ValueError):
        return ReleaseNotes()
    actions = adopter_actions(sections)
    return ReleaseNotes(
        sections, applicable_actions(actions, *project_presence(project_root, actions))
    )
