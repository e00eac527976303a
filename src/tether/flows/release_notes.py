"""What a person reads before confirming an update: the release notes between B and L
and the follow-ups they ask for that still apply to this project."""

from __future__ import annotations

from pathlib import Path

from tether.errors import TetherError
from tether.fsio import read_bytes
from tether.valueclass import field, valueclass

TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays

if TYPE_CHECKING:  # the parser is imported only when a release ships a changelog
    from tether.engine.keep_a_changelog import AdopterAction, Section


@valueclass()
class ReleaseNotes:
    """The changelog's sections between the installed release and the target, and the
    adopter actions they ask for."""

    sections: list[Section] = field(default_factory=list)
    actions: list[AdopterAction] = field(default_factory=list)
    # The changelog had no section in the range: the one section is the release's own
    # published notes (GAIA Step 4: its GitHub release body).
    from_release_page: bool = False


def release_notes(project_root: Path, changelog: Path, installed: str, target: str) -> ReleaseNotes:
    """Sections strictly newer than ``installed`` up to ``target``, read from the new
    release's changelog; none when it has no changelog or a version does not parse."""
    try:
        text = read_bytes(changelog).decode("utf-8", "replace")
    except OSError:
        return ReleaseNotes()
    from tether.engine.keep_a_changelog import adopter_actions, applicable_actions, sections_between
    from tether.flows.changelog import project_presence

    try:
        sections = sections_between(text, installed, target)
    except (OSError, ValueError):
        return ReleaseNotes()
    actions = adopter_actions(sections)
    return ReleaseNotes(
        sections, applicable_actions(actions, *project_presence(project_root, actions))
    )


def with_release_page(
    notes: ReleaseNotes, source_spec: str, cache_dir: Path, installed: str, target: str
) -> ReleaseNotes:
    """When the changelog has nothing between ``installed`` and ``target``, the notes the
    source published with ``target`` (a GitHub release's body), when it publishes any.
    Best effort: a source that cannot say leaves the notes as they were."""
    if notes.sections or not source_spec or installed == target:
        return notes
    from tether.sources import open_source

    try:
        source = open_source(source_spec, cache_dir)
    except TetherError:
        return notes
    published = getattr(source, "release_body", None)
    body = published(target) if callable(published) else None
    if not isinstance(body, str) or not body.strip():
        return notes
    from tether.engine.keep_a_changelog import Section

    section = Section(target, "", body.strip("\n").replace("\r\n", "\n"))
    return ReleaseNotes([section], notes.actions, from_release_page=True)
