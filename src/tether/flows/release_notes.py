"""What a person reads before confirming an update: the release notes between B and L
and the follow-ups they ask for that still apply to this project."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tether.engine.changelog import (
    AdopterAction,
    Section,
    adopter_actions,
    applicable_actions,
    sections_between,
)


@dataclass
class ReleaseNotes:
    sections: list[Section] = field(default_factory=list)
    actions: list[AdopterAction] = field(default_factory=list)


def release_notes(project_root: Path, changelog: Path, installed: str, target: str) -> ReleaseNotes:
    """Sections strictly newer than ``installed`` up to ``target``, read from the new
    release's changelog; none when it has no changelog or a version does not parse."""
    from tether.flows.publish import project_presence

    try:
        text = changelog.read_text(encoding="utf-8", errors="replace")
        sections = sections_between(text, installed, target)
    except (OSError, ValueError):
        return ReleaseNotes()
    actions = adopter_actions(sections)
    return ReleaseNotes(
        sections, applicable_actions(actions, *project_presence(project_root, actions))
    )
