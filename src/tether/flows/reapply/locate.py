"""Where GSD leaves its saved patches, when ``--patches`` is not given.

GSD's installer saves the customised files into ``gsd-local-patches/`` inside the runtime's
config folder. The places are tried in GSD's own order: per runtime (Kilo, OpenCode, Gemini,
Codex, Claude) the first of its environment variables that is set; then the global config
folders under ``$HOME``; then the local-install folders under the working directory. The
first place holding a ``backup-meta.json`` (itself or in a saved subfolder) is used.

``gsd-pristine/`` beside the patches folder, when present, holds the pristine copies the
installer saved, and is the default pristine folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tether.errors import TetherError
from tether.flows.reapply.patches import META_FILE, find_patch_set

PATCHES_FOLDER = "gsd-local-patches"
PRISTINE_FOLDER = "gsd-pristine"

# Per runtime, GSD reads only the first variable that is set: (variable, how it names the
# config folder). "dir": the folder; "file": a config file inside it; "xdg": its parent.
_RUNTIME_VARIABLES: tuple[tuple[tuple[str, str, str], ...], ...] = (
    (
        ("KILO_CONFIG_DIR", "dir", ""),
        ("KILO_CONFIG", "file", ""),
        ("XDG_CONFIG_HOME", "xdg", "kilo"),
    ),
    (
        ("OPENCODE_CONFIG_DIR", "dir", ""),
        ("OPENCODE_CONFIG", "file", ""),
        ("XDG_CONFIG_HOME", "xdg", "opencode"),
    ),
    (("GEMINI_CONFIG_DIR", "dir", ""),),
    (("CODEX_HOME", "dir", ""),),
    (("CLAUDE_CONFIG_DIR", "dir", ""),),
)
_GLOBAL_FOLDERS = (".config/kilo", ".config/opencode", ".opencode", ".gemini", ".codex", ".claude")
_LOCAL_FOLDERS = (
    ".config/kilo",
    ".kilo",
    ".config/opencode",
    ".opencode",
    ".gemini",
    ".codex",
    ".claude",
)


@dataclass(frozen=True)
class Place:
    """One place GSD may have left its patches, and what points there."""

    folder: Path
    source: str  # the variable, "global" or "local"


@dataclass(frozen=True)
class Located:
    """The patches folder found (None: there is none anywhere) and every place tried."""

    folder: Path | None
    source: str
    searched: tuple[Place, ...]


def candidate_places(env: Mapping[str, str], cwd: Path) -> list[Place]:
    """Every place, in GSD's order (pure: the environment and working directory given)."""
    home = env.get("HOME") or str(Path.home())
    places: list[Place] = []
    for variables in _RUNTIME_VARIABLES:
        for name, kind, runtime in variables:
            value = env.get(name)
            if value:
                places.append(Place(_config_folder(value, kind, runtime, home), name))
                break
    places.extend(Place(Path(home) / d / PATCHES_FOLDER, "global") for d in _GLOBAL_FOLDERS)
    places.extend(Place(cwd / d / PATCHES_FOLDER, "local") for d in _LOCAL_FOLDERS)
    return places


def _config_folder(value: str, kind: str, runtime: str, home: str) -> Path:
    path = Path(home) / value[2:] if value.startswith("~/") else Path(value)
    if kind == "file":
        path = path.parent
    elif kind == "xdg":
        path = path / runtime
    return path / PATCHES_FOLDER


def locate_patches(env: Mapping[str, str], cwd: Path) -> Located:
    """The first place holding a ``backup-meta.json``; a folder without one is refused
    with every place tried, and no folder anywhere is ``Located(None, ...)``."""
    places = tuple(candidate_places(env, cwd))
    existing = [place for place in places if place.folder.is_dir()]
    for place in existing:
        try:
            find_patch_set(place.folder)
        except TetherError:
            continue
        return Located(place.folder, place.source, places)
    if existing:
        tried = "; ".join(f"{p.folder} ({p.source})" for p in places)
        raise TetherError(
            f"{existing[0].folder}: no {META_FILE} here or in a saved subfolder; searched: {tried}"
        )
    return Located(None, "", places)


def default_pristine(patches: Path) -> Path | None:
    """``gsd-pristine/`` beside the patches folder, when the installer left one."""
    pristine = patches.absolute().parent / PRISTINE_FOLDER
    return pristine if pristine.is_dir() else None
