"""``.tether/config.toml``: the adopter's own settings for a project, committed with it.

What the adopter decides, as opposed to what tether records: the shipped files they took
over (``[own] paths``, written by ``tether own``) and what fails ``tether check``
(``[check] fail_on``). It lives in tether's own folder in every profile (no release writes
there) and is committed in every profile, so every clone and every colleague's run honours
it: the state file is not (GAIA's and a copier or cruft project's are local records).

The file arrives through pull requests like any other: it is read with the parse bounds,
and every path it names passes the one path rule before anything acts on it.
"""

from __future__ import annotations

from pathlib import Path

from tether.errors import TetherError
from tether.fsio import NOT_REGULAR, NotRegularFileError, cannot_read, read_regular
from tether.parselimits import MAX_NESTING, toml_loads
from tether.pathrules import NOTHING_RESERVED, ReservedPaths, project_path_problem
from tether.valueclass import valueclass

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which status and check pay
if TYPE_CHECKING:
    from typing import Any

CONFIG_FILE = ".tether/config.toml"

_HEADER = (
    "# tether's settings for this project, kept with it (commit this file).\n"
    "# [own] paths: shipped files you took over with 'tether own' (updates leave them alone).\n"
    "# [check] fail_on: what makes 'tether check' fail (docs/cli.md, 'tether check').\n"
)


@valueclass(frozen=True)
class ProjectConfig:
    """The adopter's own settings, from ``.tether/config.toml``."""

    # Shipped paths the adopter took over: never updated, never reported as drift.
    own: tuple[str, ...] = ()
    # What fails ``tether check``; None: the default (``flows/status.py``).
    fail_on: tuple[str, ...] | None = None


def load_config(root: Path, reserved: ReservedPaths = NOTHING_RESERVED) -> ProjectConfig:
    """The project's settings; the defaults when it has no such file. One line naming the
    file and the entry for anything malformed (exit 1)."""
    path = root / CONFIG_FILE
    try:
        raw = read_regular(path)
    except FileNotFoundError:
        return ProjectConfig()
    except NotRegularFileError:
        raise TetherError(f"{path}: {NOT_REGULAR}") from None
    except OSError as error:
        raise TetherError(cannot_read(path, error)) from None
    import tomllib  # only a project that has the file pays for the TOML parser

    try:
        data = toml_loads(raw.decode("utf-8"), max_depth=MAX_NESTING)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise TetherError(f"{path}: not valid TOML ({error})") from None
    return ProjectConfig(
        own=tuple(_paths(path, data, reserved)),
        fail_on=_fail_on(path, data),
    )


def _table(path: Path, data: dict[str, Any], name: str) -> dict[str, Any]:
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise TetherError(f"{path}: [{name}] must be a table")
    return table


def _strings(path: Path, table: dict[str, Any], where: str, key: str) -> list[str] | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise TetherError(f"{path}: {where} {key} must be a list of strings")
    return list(value)


def _paths(path: Path, data: dict[str, Any], reserved: ReservedPaths) -> list[str]:
    paths = _strings(path, _table(path, data, "own"), "[own]", "paths") or []
    for entry in paths:
        problem = project_path_problem(entry) or reserved.problem(entry)
        if problem:
            raise TetherError(f"{path}: [own] paths: {entry!r}: {problem}")
    return sorted(set(paths))


def _fail_on(path: Path, data: dict[str, Any]) -> tuple[str, ...] | None:
    names = _strings(path, _table(path, data, "check"), "[check]", "fail_on")
    return None if names is None else tuple(dict.fromkeys(names))


def render_own(existing: bytes | None, paths: list[str]) -> bytes:
    """The config file with ``[own] paths`` set to ``paths``; everything else in it (other
    tables, comments, the order of keys) kept as the adopter wrote it. ValueError when the
    file is no TOML tomlkit can edit."""
    from tomlkit.exceptions import TOMLKitError

    try:
        return _rendered_own(existing, paths)
    except (TOMLKitError, UnicodeDecodeError, TypeError) as error:
        raise ValueError(str(error)) from None


def _rendered_own(existing: bytes | None, paths: list[str]) -> bytes:
    import tomlkit

    document = tomlkit.parse(existing.decode("utf-8")) if existing else tomlkit.document()
    if not existing:
        for line in _HEADER.splitlines():
            document.add(tomlkit.comment(line.removeprefix("# ")))
    own = document.get("own")
    if own is None:
        own = tomlkit.table()
        document["own"] = own
    listing = tomlkit.array()
    listing.extend(sorted(set(paths)))
    listing.multiline(len(paths) > 1)
    own["paths"] = listing
    return tomlkit.dumps(document).encode("utf-8")
