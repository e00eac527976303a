"""Whether a conflict an update left is settled: one rule for status, check, update, pr,
install, the template hooks and reapply."""

from __future__ import annotations

from tether.flows.project import Project
from tether.fsio import read_regular
from tether.state.store import ConflictRecord

CONFLICT_START = b"<<<<<<< "


def has_conflict_markers(data: bytes) -> bool:
    """A line opens a conflict (``<<<<<<< ``), as a line merge writes it."""
    return data.startswith(CONFLICT_START) or b"\n" + CONFLICT_START in data


def conflict_is_unresolved(project: Project, path: str, record: ConflictRecord) -> bool:
    """A conflict left in place (markers) is settled once no marker is left; one left beside
    the file (a patch, a new release's copy) once its artifact is gone. A marker artifact that
    is not a readable regular file reads as settled: a FIFO or device is not opened, and the
    update that reads the path next reports what it is."""
    artifact = project.path(record.artifact)
    if record.style == "markers":
        try:
            return has_conflict_markers(read_regular(artifact))
        except OSError:
            return False
    return artifact.exists()
