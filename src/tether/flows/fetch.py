"""The release a project updates to, from wherever its kind of project takes it: a template
render (copier, cruft), a recipe folder that is one release tree, or a release source."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tether import progress
from tether.flows.project import (
    Project,
    Release,
    check_tree_version,
    read_release,
    read_tree_release,
)
from tether.sources import open_source
from tether.valueclass import replace


def fetch_release(
    project: Project, source_spec: str, version: str, exclude: Sequence[str] = ()
) -> Release:
    """Release ``version`` from ``source_spec``; ``exclude``: the adopter's patterns for a
    release without a manifest (see ``read_release``)."""
    if project.template is not None:  # copier's or cruft's: their module only for them
        from tether.flows.template_project import template_release

        return template_release(project, version)
    if project.profile.source_is_tree:
        release = read_tree_release(Path(source_spec), source_spec, project.profile)
        check_tree_version(release.version, version, source_spec)
        return release
    with progress.phase(f"fetching release {version}"):
        source = open_source(source_spec, project.releases_cache)
        tree = source.fetch(version)
        # The source's spelling of the version (no leading v), whatever the caller's was:
        # records store the version, never the tag.
        release = read_release(tree.root, tree.version, source_spec, project.profile, exclude)
        return replace(release, notes=tuple(source.notes))
