"""``tether status`` and ``tether check``: drift against the installed baseline."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from tether import progress
from tether.flows.baseline import Baseline, load_baseline
from tether.flows.project import Project, open_project
from tether.fsio import sha256_file
from tether.model.manifest import FileClass
from tether.state.statcache import StatCache
from tether.state.store import ConflictRecord

CONFLICT_START = b"<<<<<<< "


@dataclass
class StatusReport:
    profile: str
    upstream: str
    source: str
    installed_version: str
    latest_version: str | None = None
    clean: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    modified_owned: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    deleted_owned: list[str] = field(default_factory=list)
    conflicts: list[dict[str, str]] = field(default_factory=list)

    @property
    def update_available(self) -> bool:
        from tether.versions import compare_versions, is_version

        latest, installed = self.latest_version, self.installed_version
        if latest is None or not (is_version(latest) and is_version(installed)):
            return False
        return compare_versions(latest, installed) > 0

    def check_reasons(self) -> list[str]:
        reasons = []
        if self.modified_owned or self.deleted_owned:
            reasons.append("owned-drift")
        if self.update_available:
            reasons.append("update-available")
        if self.conflicts:
            reasons.append("unresolved-conflicts")
        return reasons

    def to_json(self) -> dict[str, object]:
        return {
            "profile": self.profile,
            "upstream": self.upstream,
            "source": self.source,
            "installed_version": self.installed_version,
            "latest_version": self.latest_version,
            "clean": len(self.clean),
            "modified": self.modified,
            "modified_owned": self.modified_owned,
            "deleted": self.deleted,
            "deleted_owned": self.deleted_owned,
            "conflicts": self.conflicts,
        }


def _has_conflict_markers(path: Path) -> bool:
    try:
        data = path.read_bytes()
    except OSError:
        return False
    return data.startswith(CONFLICT_START) or b"\n" + CONFLICT_START in data


def conflict_is_unresolved(project: Project, path: str, record: ConflictRecord) -> bool:
    artifact = project.path(record.artifact)
    if record.style == "markers":
        return _has_conflict_markers(artifact)
    return artifact.exists()


def unresolved_conflicts(project: Project, baseline: Baseline) -> list[dict[str, str]]:
    if baseline.state is None:
        return []
    return [
        {"path": path, "style": record.style, "artifact": record.artifact}
        for path, record in sorted(baseline.state.conflicts.items())
        if conflict_is_unresolved(project, path, record)
    ]


def _crlf_checkout_of(target: Path, baseline: Baseline, rel: str) -> bool:
    """The file differs from its baseline only by CRLF line endings (a checkout setting)."""
    from tether.engine.eol import same_text

    try:
        data = target.read_bytes()
    except OSError:
        return False
    return b"\r\n" in data and same_text(data, baseline.read(rel) or b"")


def current_digest(project: Project, rel: str, stats: StatCache) -> str | None:
    """sha256 of the project's file (None when absent), through the stat cache."""
    target = project.path(rel)
    try:
        info = os.stat(target)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not stat.S_ISREG(info.st_mode):
        return ""
    cached = stats.lookup(rel, info)
    if cached is not None:
        return cached
    digest = sha256_file(target)
    stats.record(rel, info, digest)
    return digest


def classify_drift(project: Project, baseline: Baseline, report: StatusReport) -> None:
    stats = project.stat_cache()
    for rel, record in progress.tracked("checking", sorted(baseline.files.items())):
        if rel in baseline.sentinels:
            continue
        target = project.path(rel)
        owned = record.cls is FileClass.OWNED
        digest = current_digest(project, rel, stats)
        if digest is None:
            report.deleted.append(rel)
            if owned:
                report.deleted_owned.append(rel)
            continue
        if digest == record.sha256 or _crlf_checkout_of(target, baseline, rel):
            report.clean.append(rel)
        else:
            report.modified.append(rel)
            if owned:
                report.modified_owned.append(rel)
    stats.save()


def project_status(
    root: Path,
    profile: str | None = None,
    source: str | None = None,
    check_latest: bool = False,
) -> StatusReport:
    project = open_project(root, profile)
    baseline = load_baseline(project, source)
    report = StatusReport(
        project.profile.name, baseline.upstream, baseline.source, baseline.version
    )
    classify_drift(project, baseline, report)
    report.conflicts = unresolved_conflicts(project, baseline)
    if check_latest:
        report.latest_version = newest_available(project, baseline.source)
    return report


def newest_available(project: Project, source_spec: str) -> str | None:
    from tether.sources import open_source

    versions = open_source(source_spec, project.releases_cache).available_versions()
    return versions[-1] if versions else None
