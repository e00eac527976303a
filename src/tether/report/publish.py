"""The words of the publisher's commands: ``tether manifest build`` and ``tether release pack``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.publish.manifest import MANIFEST_PATH

if TYPE_CHECKING:
    from tether.publish.manifest import ManifestReport
    from tether.publish.pack import PackResult


def _manifest_summary(report: ManifestReport) -> str:
    manifest = report.build.manifest
    per_class = ", ".join(f"{n} {cls}" for cls, n in report.class_counts())
    text = f"{manifest.name} {manifest.version}: {len(manifest.files)} files"
    text += f" ({per_class})" if per_class else ""
    sentinels = len(manifest.sentinels)
    if sentinels:
        text += f", {sentinels} sentinel{'s' if sentinels > 1 else ''}"
    return text


def render_manifest_build(report: ManifestReport) -> str:
    """The stale check's difference and advice, or what was written, or that nothing was."""
    if report.stale_left:
        return (
            f"{report.build.diff()}"
            f"{MANIFEST_PATH} is stale; run 'tether manifest build' and commit it"
        )
    if report.written:
        return f"wrote {MANIFEST_PATH}: {_manifest_summary(report)}"
    return f"{MANIFEST_PATH} is up to date: {_manifest_summary(report)}"


def render_pack(result: PackResult) -> str:
    return "\n".join(
        [
            f"packed {result.folder} ({result.files} files)",
            f"  {result.tarball}",
            f"  {result.checksum_file}",
            f"  sha256 {result.sha256}",
        ]
    )
