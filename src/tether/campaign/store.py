"""A campaign's folder on disk, written by the coordinator alone.

    <folder>/campaign.json          the settings and the repositories in registry order
    <folder>/repos/<name>.json      one record per repository, replaced atomically
    <folder>/mirrors/<url>.git      a bare mirror per remote (campaign/units.py)
    <folder>/work/<name>/           tether's own worktree per repository
    <folder>/coordinator.lock       held by the one ``campaign run`` at work
    <folder>/locks/<url>.lock       held by the unit working in that mirror (workspace.py)
    <folder>/incoming/<name>.bundle a unit's commits being taken in (bundles.py), then removed

The folder is ``$XDG_STATE_HOME/tether/campaigns/<name>/`` unless ``--dir`` names the folder
campaigns live in. Each record write is durable before the next step starts, so a
coordinator killed at any point leaves every record in a state it can continue from.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.campaign.model import NAME_RULE, RepoRecord, Settings
from tether.errors import TetherError
from tether.fsio import atomic_write, read_bytes
from tether.parselimits import MAX_NESTING, json_loads
from tether.runs.rundir import state_home
from tether.state import crashpoint

SETTINGS_FILE = "campaign.json"
# The crash point after each durable record (state/crashpoint.py), for the resume tests.
RECORD_STEP = "campaign-record"


def campaigns_home(explicit: str | None = None) -> Path:
    """Where campaign folders live: ``--dir``, else tether's state folder."""
    # Absolute: the settings record the folder, and a unit elsewhere compares it with its own.
    return (
        Path(explicit).expanduser().absolute()
        if explicit
        else state_home() / "tether" / "campaigns"
    )


def campaign_folder(name: str, explicit: str | None = None) -> Path:
    if not NAME_RULE.fullmatch(name):
        raise TetherError(
            f"campaign name {name!r} is not usable as a folder name "
            "(letters, digits, '.', '_' and '-', starting with a letter or digit)"
        )
    return campaigns_home(explicit) / name


def safe_file_name(name: str) -> str:
    """A file name for ``name``: readable, and unique even when two names read alike."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[:60] or "repo"
    return f"{readable}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


@dataclass(frozen=True)
class CampaignFolder:
    root: Path

    @property
    def settings_path(self) -> Path:
        return self.root / SETTINGS_FILE

    def record_path(self, name: str) -> Path:
        return self.root / "repos" / f"{safe_file_name(name)}.json"

    def mirror_path(self, url: str) -> Path:
        return self.root / "mirrors" / f"{safe_file_name(url)}.git"

    def worktree_path(self, name: str) -> Path:
        return self.root / "work" / safe_file_name(name)

    def unit_lock_path(self, url: str) -> Path:
        return self.root / "locks" / f"{safe_file_name(url)}.lock"

    def incoming_path(self, name: str) -> Path:
        return self.root / "incoming" / f"{safe_file_name(name)}.bundle"

    @property
    def lock_path(self) -> Path:
        return self.root / "coordinator.lock"

    def exists(self) -> bool:
        return self.settings_path.is_file()

    def holds(self, settings: Settings) -> bool:
        """True when this folder is the campaign ``settings`` describe and may be written
        here: a worker that sees it at the same path (a shared filesystem) works in it."""
        try:
            found = Settings.from_json(_read_json(self.settings_path)["settings"])
        except (TetherError, KeyError, TypeError, ValueError):
            return False
        return found == settings and os.access(self.root, os.W_OK)

    def create(self, settings: Settings, records: Sequence[RepoRecord]) -> None:
        """Every record first, the settings last: a folder without its settings file is a
        start that did not finish, and a new start may overwrite it."""
        for record in records:
            self.save(record)
        document = {"settings": settings.to_json(), "repositories": [r.name for r in records]}
        _write_json(self.settings_path, document)

    def save(self, record: RepoRecord) -> None:
        _write_json(self.record_path(record.name), record.to_json())
        crashpoint.after_append(RECORD_STEP)

    def load(self) -> tuple[Settings, list[RepoRecord]]:
        if not self.exists():
            raise TetherError(
                f"no campaign at {self.root} (start one with 'tether campaign start')"
            )
        document = _read_json(self.settings_path)
        try:
            settings = Settings.from_json(document["settings"])
            names = [str(name) for name in document["repositories"]]
        except (KeyError, TypeError, ValueError) as error:
            raise TetherError(
                f"campaign file is malformed: {self.settings_path}: {error}"
            ) from None
        return settings, [self._record(name) for name in names]

    def _record(self, name: str) -> RepoRecord:
        path = self.record_path(name)
        try:
            return RepoRecord.from_json(_read_json(path))
        except (KeyError, TypeError, ValueError) as error:
            raise TetherError(f"campaign record is malformed: {path}: {error}") from None


def _write_json(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode())


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json_loads(read_bytes(path).decode("utf-8"), max_depth=MAX_NESTING)
    except FileNotFoundError:
        raise TetherError(f"campaign file is missing: {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise TetherError(f"campaign file is unreadable: {path}: {error}") from None
    if not isinstance(data, dict):
        raise TetherError(f"campaign file is malformed: {path}: expected a JSON object")
    return data
