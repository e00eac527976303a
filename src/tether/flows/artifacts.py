"""Conflict artifacts in the profile's merge folder: one naming rule for every kind."""

from __future__ import annotations

from tether.flows.project import Project
from tether.model.manifest import FileClass
from tether.model.plan import Bucket, FileAction, Op, RowWhy


def artifact_path(project: Project, rel: str, suffix: str) -> str:
    """``<merge folder>/<path><suffix>``, or the name the profile gives that path's
    artifacts (GAIA: ``.gaia-merge/audit-ci.yml.patch`` for ``.gaia/audit-ci.yml``)."""
    profile = project.profile
    return f"{profile.merge_dir}/{profile.artifact_names.get(rel, rel)}{suffix}"


def patch_conflict(
    project: Project, rel: str, cls: FileClass, patch: bytes, mode: int, why: RowWhy | None = None
) -> FileAction:
    """The adopter's file stays as it is; a patch towards the release waits beside it."""
    artifact = artifact_path(project, rel, ".patch")
    return FileAction(
        rel,
        cls,
        Bucket.CONFLICT,
        Op.PATCH,
        None,
        mode,
        artifact,
        patch,
        decision="patch",
        why=why,
    )
