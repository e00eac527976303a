"""``campaign start``, ``run`` and ``status`` as one library call each. Nothing here prints.

The coordinator (``run_campaign``, campaign/coordinator.py) is the only writer of a campaign's
records. It hands each unfinished record to its unit (campaign/units.py) through an executor
(campaign/executors.py), takes the record the unit returns and writes it before that
repository's next step, so killing it anywhere and running it again continues with the
records that are not finished.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.campaign.model import (
    CONFLICTS,
    DEFAULT_ON_CONFLICT,
    FAILED,
    ON_CONFLICT,
    RepoRecord,
    Settings,
)
from tether.campaign.store import CampaignFolder, campaign_folder
from tether.errors import Exit, TetherError, UsageError
from tether.runs.registry import Registry, load_registry, registry_path, utc_timestamp
from tether.runs.selection import carries, check_names, split_names

if TYPE_CHECKING:
    from tether.campaign.coordinator import RunOptions


@dataclass(frozen=True)
class StartRequest:
    name: str
    upstream: str
    to: str
    registry: str | None = None  # --registry; None: $TETHER_REGISTRY, then the XDG default
    projects: Sequence[str] | None = None  # --projects values as typed (comma lists)
    directory: str | None = None  # --dir: where campaign folders live
    on_conflict: str = DEFAULT_ON_CONFLICT
    conflict: str | None = None  # --conflict for every update; None: each profile's style
    auto: str | None = None  # --auto for every update
    keywords: Sequence[str] = ()  # --keyword: only repositories carrying every one


@dataclass(frozen=True)
class CampaignResult:
    document: dict[str, Any]
    exit_code: int


def start_campaign(request: StartRequest) -> CampaignResult:
    """A new campaign folder with one pending record per selected repository. Everything is
    checked before anything is written."""
    folder = CampaignFolder(campaign_folder(request.name, request.directory))
    if folder.exists():
        raise TetherError(f"a campaign named {request.name!r} already exists at {folder.root}")
    if request.on_conflict not in ON_CONFLICT:
        raise UsageError(f"--on-conflict must be one of {', '.join(ON_CONFLICT)}")
    if not request.upstream.strip() or not request.to.strip():
        raise UsageError("--upstream and --to must not be empty")
    registry = load_registry(registry_path(request.registry))
    records = _records(registry, split_names(request.projects), request.keywords)
    settings = Settings(
        request.name,
        request.upstream,
        request.to,
        request.on_conflict,
        str(folder.root),
        str(registry.path.absolute()),
        utc_timestamp(),
        request.conflict or "",
        request.auto or "",
    )
    folder.create(settings, records)
    return CampaignResult(_document(folder, settings, records), Exit.OK)


def _records(registry: Registry, names: Sequence[str], keywords: Sequence[str]) -> list[RepoRecord]:
    if not registry.projects:
        raise TetherError(f"the registry {registry.path} lists no repositories")
    check_names(registry, names)
    chosen = [
        r
        for name, r in registry.projects.items()
        if (not names or name in names) and carries(r, keywords)
    ]
    if not chosen:
        raise TetherError(
            f"no repository of the registry {registry.path} carries every keyword "
            f"({', '.join(keywords)}); nothing was written"
        )
    return [
        RepoRecord(r.name, r.url or str(registry.resolve(r).absolute()), r.default_branch)
        for r in chosen
    ]


def run_campaign(
    name: str, directory: str | None = None, options: RunOptions | None = None
) -> CampaignResult:
    """Carry every unfinished repository to a finished state (campaign/coordinator.py):
    one at a time here, or side by side through a process pool or a Dask cluster."""
    from tether.campaign.coordinator import RunOptions, coordinate
    from tether.state.lock import ProjectLock

    options = (options or RunOptions()).checked()
    folder = CampaignFolder(campaign_folder(name, directory))
    settings, records = folder.load()
    with ProjectLock(folder.lock_path, f"campaign run {name}"):
        outcome = coordinate(folder, settings, records, options)
    document = {**_document(folder, settings, outcome.records), "run": outcome.to_json(options)}
    stopped = Exit.ERROR if outcome.stopped_by else None
    return CampaignResult(document, stopped or _run_exit_code(outcome.records))


def _run_exit_code(records: Sequence[RepoRecord]) -> int:
    states = {record.status for record in records}
    if FAILED in states:
        return Exit.ERROR
    return Exit.CONFLICTS if CONFLICTS in states else Exit.OK


def campaign_status(name: str, directory: str | None = None) -> CampaignResult:
    """The campaign's records as they are on disk; reads only."""
    folder = CampaignFolder(campaign_folder(name, directory))
    settings, records = folder.load()
    return CampaignResult(_document(folder, settings, records), Exit.OK)


def _document(
    folder: CampaignFolder, settings: Settings, records: Sequence[RepoRecord]
) -> dict[str, Any]:
    from tether.report.campaign import campaign_document

    shown = {**settings.to_json(), "branch": settings.branch}
    return campaign_document(str(folder.root), shown, [r.to_json() for r in records])
