"""``tether.toml``: the publisher's settings, validated before anything is built from them.

``root`` is only read for ``version_file``; everything else is a check of the decoded
document, so a typo never silently ships the wrong manifest.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.errors import TetherError
from tether.fsio import cannot_read, read_bytes
from tether.model.lifecycle_declarations import LIFECYCLE_KEYS, Lifecycle, parse_lifecycle
from tether.model.manifest import DEFAULT_CHANGELOG, FileClass, Rename
from tether.parselimits import MAX_NESTING, toml_loads
from tether.pathrules import project_path_problem
from tether.profiles import reserved_by_any_profile
from tether.versions import parse_version, strip_v

CONFIG_NAME = "tether.toml"


@dataclass(frozen=True)
class PublishConfig:
    name: str
    version: str
    default_class: FileClass | None = None
    sentinels: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    changelog: str = DEFAULT_CHANGELOG
    # (class, patterns) in the order the file lists them: the first match wins.
    classes: tuple[tuple[FileClass, tuple[str, ...]], ...] = ()
    merge: dict[str, dict[str, Any]] = field(default_factory=dict)
    regions: tuple[dict[str, Any], ...] = ()
    renames: tuple[Rename, ...] = ()
    hashes: bool = False  # record each file's sha256 in the manifest
    lifecycle: Lifecycle = field(default_factory=Lifecycle)  # docs/lifecycle.md


_CONFIG_KEYS = frozenset(
    {
        "name",
        "version",
        "version_file",
        "default_class",
        "sentinels",
        "exclude",
        "changelog",
        "classes",
        "merge",
        "regions",
        "renames",
        "hashes",
        *LIFECYCLE_KEYS,
    }
)


def _config_flag(origin: str, key: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TetherError(f"{origin}: '{key}' must be true or false")
    return value


def _class_value(origin: str, where: str, value: object) -> FileClass:
    try:
        return FileClass(str(value))
    except ValueError:
        allowed = ", ".join(c.value for c in FileClass)
        raise TetherError(
            f"{origin}: {where}: unknown class {value!r} (expected {allowed})"
        ) from None


def _str_list(origin: str, key: str, value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise TetherError(f"{origin}: '{key}' must be a list of non-empty strings")
    return tuple(value)


def _relpath(origin: str, key: str, value: object) -> str:
    if not isinstance(value, str):
        raise TetherError(f"{origin}: '{key}' must be a string")
    problem = project_path_problem(value)
    if problem:
        raise TetherError(f"{origin}: '{key}': {value!r}: {problem}")
    return value


def _config_version(origin: str, data: dict[str, Any], root: Path) -> str:
    if ("version" in data) == ("version_file" in data):
        raise TetherError(f"{origin}: give exactly one of 'version' and 'version_file'")
    if "version" in data:
        raw, where = data["version"], "'version'"
        if not isinstance(raw, str):
            raise TetherError(f"{origin}: 'version' must be a string such as \"1.2.0\"")
    else:
        rel = _relpath(origin, "version_file", data["version_file"])
        where = rel
        try:
            raw = read_bytes(root / rel).decode("utf-8").strip()
        except (OSError, UnicodeDecodeError) as error:
            raise TetherError(f"{origin}: cannot read version_file {rel} ({error})") from None
    version = strip_v(raw.strip())
    if parse_version(version) is None:
        raise TetherError(f"{origin}: {where}: {raw!r} is not a semantic version (x.y.z)")
    return version


def _config_classes(origin: str, raw: object) -> tuple[tuple[FileClass, tuple[str, ...]], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise TetherError(f"{origin}: [classes] must map a class to a list of globs")
    # tomllib keeps the file's order, and that order decides which class wins.
    return tuple(
        (_class_value(origin, f"classes.{name}", name), _str_list(origin, f"classes.{name}", globs))
        for name, globs in raw.items()
    )


def _config_merge(origin: str, raw: object) -> dict[str, dict[str, Any]]:
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(v, dict) for v in raw.values()):
        raise TetherError(
            f"{origin}: [merge] must map a path to a table such as {{ preset = ... }}"
        )
    return {
        _relpath(origin, "merge", path): dict(sorted(rule.items()))
        for path, rule in sorted(raw.items())
    }


def _config_regions(origin: str, raw: object) -> tuple[dict[str, Any], ...]:
    from tether.engine.regions import parse_region_declarations

    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
        raise TetherError(f"{origin}: regions must be [[regions]] tables")
    # The region engine forgives a broken declaration at update time; a publisher
    # should hear about it before shipping instead.
    _decls, problems = parse_region_declarations(raw)
    if problems:
        raise TetherError(f"{origin}: {problems[0]}")
    return tuple(raw)


def _config_renames(origin: str, raw: object) -> tuple[Rename, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(
        isinstance(r, dict) and set(r) == {"from", "to"} for r in raw
    ):
        raise TetherError(f"{origin}: renames must be a list of {{ from = ..., to = ... }}")
    return tuple(
        Rename(_relpath(origin, "renames", r["from"]), _relpath(origin, "renames", r["to"]))
        for r in raw
    )


def _config_name(origin: str, raw: object) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise TetherError(f"{origin}: 'name' is required (the upstream's name, e.g. \"acme-kit\")")
    return raw.strip()


def parse_publish_config(data: dict[str, Any], origin: str, root: Path) -> PublishConfig:
    """Validate a decoded ``tether.toml``. ``root`` is where ``version_file`` is read from."""
    unknown = sorted(set(data) - _CONFIG_KEYS)
    if unknown:
        raise TetherError(
            f"{origin}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_CONFIG_KEYS))})"
        )
    default = data.get("default_class")
    return PublishConfig(
        name=_config_name(origin, data.get("name")),
        version=_config_version(origin, data, root),
        default_class=None if default is None else _class_value(origin, "default_class", default),
        sentinels=tuple(
            _relpath(origin, "sentinels", s)
            for s in _str_list(origin, "sentinels", data.get("sentinels"))
        ),
        exclude=_str_list(origin, "exclude", data.get("exclude")),
        changelog=_relpath(origin, "changelog", data.get("changelog", DEFAULT_CHANGELOG)),
        classes=_config_classes(origin, data.get("classes")),
        merge=_config_merge(origin, data.get("merge")),
        regions=_config_regions(origin, data.get("regions")),
        renames=_config_renames(origin, data.get("renames")),
        hashes=_config_flag(origin, "hashes", data.get("hashes", False)),
        # What a release may not name in any profile: refused here, naming tether.toml.
        lifecycle=parse_lifecycle(data, origin, reserved_by_any_profile()),
    )


def load_publish_config(path: Path, root: Path) -> PublishConfig:
    try:
        raw = read_bytes(path)
    except FileNotFoundError:
        raise TetherError(
            f"{path}: no such file (the publisher's config; see docs/publishing.md)"
        ) from None
    except OSError as error:
        raise TetherError(cannot_read(path, error)) from None
    try:
        data = toml_loads(raw.decode("utf-8"), max_depth=MAX_NESTING)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise TetherError(f"{path}: not valid TOML ({error})") from None
    return parse_publish_config(data, str(path), root)
