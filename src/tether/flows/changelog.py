"""``tether changelog``: the changelog sections between two versions and the follow-ups
that still apply to a project. The parsing is ``tether.engine.keep_a_changelog``; this module
finds the changelog (a file, a release of a source, or the project's recorded source) and
looks at the project. Nothing here prints; the CLI renders the report.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.engine.keep_a_changelog import (
    AdopterAction,
    Section,
    adopter_actions,
    applicable_actions,
    declared_packages,
    sections_between,
)
from tether.errors import TetherError, UsageError
from tether.fsio import cannot_read, read_bytes
from tether.model.manifest import DEFAULT_CHANGELOG
from tether.profiles import GAIA, NATIVE, detect_profile
from tether.sources.manifest_file import load_manifest
from tether.versions import parse_version, strip_v


@dataclass(frozen=True)
class ChangelogReport:
    from_version: str
    to_version: str
    origin: str  # where the changelog was read (or looked for)
    found: bool  # False when the release has no changelog at all
    sections: list[Section]
    actions: list[AdopterAction]  # only those that still apply to the project

    def to_json(self) -> dict[str, Any]:
        return {
            "from_version": self.from_version,
            "to_version": self.to_version,
            "changelog": self.origin,
            "changelog_found": self.found,
            "sections": [s.to_json() for s in self.sections],
            "actions": [a.to_json() for a in self.actions],
        }


def check_version_range(from_version: str, to_version: str) -> None:
    parsed = {}
    for option, text in (("--from", from_version), ("--to", to_version)):
        version = parse_version(text)
        if version is None:
            raise UsageError(f"{option}: {text!r} is not a version")
        parsed[option] = version
    if parsed["--from"] > parsed["--to"]:
        raise UsageError(f"--from {from_version} is newer than --to {to_version}")


def _read_text(path: Path, what: str) -> str:
    try:
        return read_bytes(path).decode("utf-8", "replace")
    except OSError as error:
        raise TetherError(cannot_read(path, error, f"the {what}")) from None


def _tree_changelog_path(tree: Path) -> str:
    """The changelog a release tree names in its manifest (native, then GAIA's), or the default."""
    for profile in (NATIVE, GAIA):
        if (tree / profile.manifest_path).is_file():
            return load_manifest(tree / profile.manifest_path, profile.manifest_format).changelog
    return DEFAULT_CHANGELOG


def release_changelog(spec: str, version: str, cache_dir: Path) -> tuple[str | None, str]:
    """(changelog text or None when the release has none, a label saying where it was read)."""
    from tether.sources import open_source

    tree = open_source(spec, cache_dir).fetch(version).root
    rel = _tree_changelog_path(tree)
    label = f"{rel} of release {strip_v(version)} ({spec})"
    path = tree / rel
    return (_read_text(path, "changelog") if path.is_file() else None), label


def _fetched_changelog(root: Path, spec: str, version: str) -> tuple[str | None, str]:
    profile = detect_profile(root) if root.is_dir() else None
    if profile is not None:
        return release_changelog(spec, version, root / profile.cache_dir / "releases")
    # Not an installed project: fetch into a throwaway cache rather than leave one behind.
    with tempfile.TemporaryDirectory(prefix="tether-changelog-") as tmp:
        return release_changelog(spec, version, Path(tmp))


def _recorded_source(root: Path) -> str:
    from tether.flows.project import open_project

    try:
        project = open_project(root)
    except TetherError:
        project = None
    state = project.load_state() if project is not None else None
    if state is None or not state.source:
        raise UsageError(
            f"{root}: no recorded source (no tether install here); give --file PATH or --source SRC"
        )
    from tether.flows.project import source_location

    assert project is not None  # a state was read from it
    return source_location(project.root, state.source)


def project_presence(root: Path, actions: Sequence[AdopterAction]) -> tuple[set[str], set[str]]:
    """(declared packages, existing paths) of the project, as far as ``actions`` ask."""
    packages: set[str] = set()
    if any(a.kind == "remove-package" for a in actions):
        names = [
            "package.json",
            "pyproject.toml",
            *sorted(p.name for p in root.glob("requirements*.txt")),
        ]
        for name in names:
            if (root / name).is_file():
                packages |= declared_packages(name, _read_text(root / name, "dependency file"))
    paths: set[str] = set()
    for action in actions:
        if action.kind != "remove-file" or action.target is None:
            continue
        if set("*?[") & set(action.target):
            paths.update(p.relative_to(root).as_posix() for p in root.glob(action.target))
        elif os.path.lexists(root / action.target):
            paths.add(action.target)
    return packages, paths


def changelog_report(
    root: Path,
    from_version: str,
    to_version: str,
    *,
    file: Path | None = None,
    source: str | None = None,
) -> ChangelogReport:
    """The sections after ``from_version`` up to ``to_version`` and the follow-ups that still
    apply to the project at ``root``. The changelog comes from ``file``, else from release
    ``to_version`` of ``source``, else of the project's recorded source."""
    check_version_range(from_version, to_version)
    if file is not None:
        text: str | None = _read_text(file, "changelog")
        origin: str = str(file)
    else:
        spec = source if source is not None else _recorded_source(root)
        text, origin = _fetched_changelog(root, spec, to_version)
    sections = sections_between(text, from_version, to_version) if text is not None else []
    actions = adopter_actions(sections)
    packages, paths = project_presence(root, actions)
    return ChangelogReport(
        from_version,
        to_version,
        origin,
        text is not None,
        sections,
        applicable_actions(actions, packages, paths),
    )
