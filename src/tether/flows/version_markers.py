"""The project's own records of the release it has installed, written by ``init`` and last
in an update: its copy of the installed manifest, gbrain's source record, the ecosystem's
version file (docs/update.md: the version is written last)."""

from __future__ import annotations

from pathlib import Path

from tether.flows.project import Project, Release, utc_now
from tether.flows.safety import PathGuard


def write_version_markers(
    project: Project, release: Release, durable: bool = True, dropped: frozenset[str] = frozenset()
) -> list[Path]:
    """The project's copy of the installed manifest (and the ecosystem's version file).
    ``durable=False``: the caller syncs the returned files with its own."""
    if project.template is not None:
        from tether.flows.template_project import write_template_record

        return write_template_record(project, release, durable)
    guard = PathGuard(project.root)
    written: list[Path] = []
    if project.profile.manifest_copy:
        written.append(
            guard.write(project.profile.manifest_copy, release.manifest_bytes, durable=durable)
        )
    if project.profile.source_record:
        from tether.flows.gbrain_record import record_path, source_record

        record = source_record(release, utc_now(), dropped)
        rel = record_path(project, release.manifest)
        assert rel is not None
        written.append(guard.write(rel, record, durable=durable))
    if project.profile.version_file:
        marker = f"{release.version}\n".encode()
        written.append(guard.write(project.profile.version_file, marker, durable=durable))
    return written
