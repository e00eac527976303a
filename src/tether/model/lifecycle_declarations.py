"""Release lifecycle declarations: what a publisher asks an update to do besides merging files.

Five kinds, each a list in the manifest (and in ``tether.toml``): ``migrations`` (programs run
when an update crosses a version), ``ownership`` (paths handed to the adopter once a condition
holds), ``templates`` (files installed from a template in the release), ``notices`` (text shown
when a condition held before the update) and ``post_update`` (keys set in the adopter's JSON
state files after the update). Parsing is pure and strict: a bad entry is an error naming it,
so a publisher hears about it in ``manifest build`` and an adopter's update stops before
anything is written. See docs/lifecycle.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from tether.errors import TetherError
from tether.model.lifecycle import BLOCKING, LIFECYCLE_KEYS, Lifecycle
from tether.parselimits import PATTERN_MAX_CHARS
from tether.pathrules import (
    NOTHING_RESERVED,
    ReservedPaths,
    program_name_problem,
    project_path_problem,
)
from tether.versions import parse_version, strip_v

__all__ = ["BLOCKING", "LIFECYCLE_KEYS", "Lifecycle"]  # where their users have found them

_TRAILER_KEY = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,63}")
MIGRATION_WHEN = ("before", "after")
TEMPLATE_INSTALL = ("if-present", "always")
ADOPTER_OWNED = "adopter-owned"
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class LifecycleError(TetherError):
    pass


@dataclass(frozen=True)
class Condition:
    """A fact about the adopter's tree. Exactly one shape:
    ``{exists}``, ``{file, matches}``, ``{file, frontmatter}``, or ``{not: condition}``."""

    file: str | None = None
    matches: str | None = None
    frontmatter: tuple[tuple[str, str], ...] = ()
    exists: str | None = None
    negated: Condition | None = None

    def to_json(self) -> dict[str, Any]:
        if self.negated is not None:
            return {"not": self.negated.to_json()}
        if self.exists is not None:
            return {"exists": self.exists}
        if self.matches is not None:
            return {"file": self.file, "matches": self.matches}
        return {"file": self.file, "frontmatter": dict(self.frontmatter)}

    def describe(self) -> str:
        if self.negated is not None:
            return f"not ({self.negated.describe()})"
        if self.exists is not None:
            return f"{self.exists} exists"
        if self.matches is not None:
            return f"{self.file} matches /{self.matches}/"
        pairs = ", ".join(f"{k}: {v}" for k, v in self.frontmatter)
        return f"{self.file} frontmatter has {pairs}"


@dataclass(frozen=True)
class Migration:
    id: str
    version: str | None  # None: runs on every update (it must be idempotent)
    when: Literal["before", "after"]
    run: tuple[str, ...]  # interpreter, operand, args…
    dry_run_args: tuple[str, ...] | None = None
    exit_ok: tuple[int, ...] = (0,)
    exit_conflict: tuple[int, ...] = ()
    summary_pattern: str | None = None
    summary_default: str | None = None  # the summary when the pattern finds nothing
    label: str | None = None  # the summary row's name ("Specs migrated")

    @property
    def interpreter(self) -> str:
        return self.run[0]

    @property
    def operand(self) -> str:
        return self.run[1]

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"id": self.id, "when": self.when, "run": list(self.run)}
        if self.version is not None:
            doc["version"] = self.version
        if self.dry_run_args is not None:
            doc["dry_run_args"] = list(self.dry_run_args)
        doc["exit"] = {"ok": list(self.exit_ok), "conflict": list(self.exit_conflict)}
        if self.summary_pattern is not None:
            doc["summary_pattern"] = self.summary_pattern
        if self.summary_default is not None:
            doc["summary_default"] = self.summary_default
        if self.label is not None:
            doc["label"] = self.label
        return doc


@dataclass(frozen=True)
class OwnershipRule:
    paths: tuple[str, ...]
    when: Condition
    treat_as: str = ADOPTER_OWNED

    def to_json(self) -> dict[str, Any]:
        return {"paths": list(self.paths), "when": self.when.to_json(), "treat_as": self.treat_as}


@dataclass(frozen=True)
class TemplateFile:
    target: str
    template: str
    install: Literal["if-present", "always"] = "if-present"
    after_refresh: str | None = None  # what to tell the adopter after a refresh

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "target": self.target,
            "template": self.template,
            "install": self.install,
        }
        if self.after_refresh is not None:
            doc["after_refresh"] = self.after_refresh
        return doc


@dataclass(frozen=True)
class Notice:
    id: str
    when: Condition
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "when": self.when.to_json(), "text": self.text}


@dataclass(frozen=True)
class PostUpdateWrite:
    file: str
    set: tuple[tuple[str, Any], ...]
    keep: tuple[str, ...] = ()
    only_if_exists: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "set": dict(self.set),
            "keep": list(self.keep),
            "only_if_exists": self.only_if_exists,
        }


@dataclass(frozen=True)
class TrailerCheck:
    """Open pull requests whose head commit carries ``<trailer_key>: <installed version>
    <40-hex>``: a stamp the update invalidates (they are audited again on their next push)."""

    trailer_key: str
    label: str = "Trailer invalidations"

    def to_json(self) -> dict[str, Any]:
        return {"trailer_key": self.trailer_key, "label": self.label}


# --------------------------------------------------------------------------- parsing


def _fail(origin: str, where: str, problem: str) -> LifecycleError:
    return LifecycleError(f"{origin}: {where}: {problem}")


def _path(origin: str, where: str, value: object, reserved: ReservedPaths | None = None) -> str:
    """A project path (``reserved`` given: the paths tether and the active profile keep for
    their own records are refused, as for shipped files) or a path of the release tree."""
    if not isinstance(value, str):
        raise _fail(origin, where, f"{value!r} is not a path")
    problem = project_path_problem(value) or (reserved.problem(value) if reserved else None)
    if problem:
        raise _fail(origin, where, f"{value!r}: {problem}")
    return value


def _id(origin: str, where: str, value: object) -> str:
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise _fail(origin, where, f"'id' {value!r} must be 1-64 letters, digits, '.', '_', '-'")
    return value


def _strings(origin: str, where: str, value: object, *, empty: bool = True) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(origin, where, "must be a list of strings")
    if not value and not empty:
        raise _fail(origin, where, "must not be empty")
    return tuple(value)


def _regex(origin: str, where: str, value: object) -> str:
    if not isinstance(value, str):
        raise _fail(origin, where, "must be a regular expression string")
    if len(value) > PATTERN_MAX_CHARS:
        raise _fail(origin, where, f"pattern longer than {PATTERN_MAX_CHARS} characters")
    try:
        re.compile(value)
    except re.error as error:
        raise _fail(origin, where, f"bad regular expression ({error})") from None
    return value


def _keys(
    origin: str, where: str, entry: object, allowed: set[str], required: set[str]
) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise _fail(origin, where, "must be an object")
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise _fail(
            origin, where, f"unknown key {unknown[0]!r} (known: {', '.join(sorted(allowed))})"
        )
    missing = sorted(required - set(entry))
    if missing:
        raise _fail(origin, where, f"missing {missing[0]!r}")
    return entry


def parse_condition(
    origin: str, where: str, raw: object, reserved: ReservedPaths = NOTHING_RESERVED
) -> Condition:
    entry = _keys(origin, where, raw, {"file", "matches", "frontmatter", "exists", "not"}, set())
    shapes = [k for k in ("matches", "frontmatter", "exists", "not") if k in entry]
    if len(shapes) != 1:
        raise _fail(
            origin,
            where,
            "a condition is one of {exists}, {file, matches}, {file, frontmatter}, {not}",
        )
    shape = shapes[0]
    if shape in ("exists", "not") and "file" in entry:
        raise _fail(origin, where, f"'file' does not go with {shape!r}")
    if shape == "not":
        return Condition(negated=parse_condition(origin, f"{where}.not", entry["not"], reserved))
    if shape == "exists":
        return Condition(exists=_path(origin, f"{where}.exists", entry["exists"], reserved))
    file = _path(origin, f"{where}.file", entry.get("file"), reserved)
    if shape == "matches":
        return Condition(file=file, matches=_regex(origin, f"{where}.matches", entry["matches"]))
    pairs = entry["frontmatter"]
    if not isinstance(pairs, dict) or not pairs:
        raise _fail(origin, f"{where}.frontmatter", "must map keys to values")
    bad = [k for k, v in pairs.items() if not isinstance(v, str | bool | int | float)]
    if bad:
        raise _fail(origin, f"{where}.frontmatter", f"{bad[0]!r}: value must be a scalar")
    return Condition(file=file, frontmatter=tuple((k, scalar_text(v)) for k, v in pairs.items()))


def scalar_text(value: object) -> str:
    """How a scalar is spelt in YAML frontmatter (true, not True)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _exit_codes(origin: str, where: str, raw: object) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if raw is None:
        return (0,), ()
    entry = _keys(origin, where, raw, {"ok", "conflict", "error"}, {"ok"})
    found: dict[str, tuple[int, ...]] = {}
    for key in ("ok", "conflict", "error"):
        codes = entry.get(key, [])
        if not isinstance(codes, list) or not all(
            isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 255 for c in codes
        ):
            raise _fail(origin, f"{where}.{key}", "must be a list of exit codes (0-255)")
        found[key] = tuple(codes)
    if not found["ok"]:
        raise _fail(origin, f"{where}.ok", "must name at least one exit code")
    shared = set(found["ok"]) & (set(found["conflict"]) | set(found["error"]))
    shared |= set(found["conflict"]) & set(found["error"])
    if shared:
        raise _fail(origin, where, f"exit code {min(shared)} is in two lists")
    return found["ok"], found["conflict"]


def _migration(origin: str, where: str, raw: object, reserved: ReservedPaths) -> Migration:
    allowed = {
        "id",
        "version",
        "when",
        "run",
        "dry_run_args",
        "exit",
        "summary_pattern",
        "summary_default",
        "label",
    }
    entry = _keys(origin, where, raw, allowed, {"id", "when", "run"})
    ident = _id(origin, where, entry["id"])
    where = f"{where} ({ident})"
    version = entry.get("version")
    if version is not None:
        if not isinstance(version, str) or parse_version(strip_v(version)) is None:
            raise _fail(origin, where, f"'version' {version!r} is not a semantic version")
        version = strip_v(version)
    when = entry["when"]
    if when not in MIGRATION_WHEN:
        raise _fail(origin, where, f"'when' must be before or after, got {when!r}")
    run = _strings(origin, f"{where}.run", entry["run"])
    if len(run) < 2:
        raise _fail(origin, f"{where}.run", "must be [interpreter, operand, args…]")
    problem = program_name_problem(run[0])
    if problem:
        raise _fail(origin, f"{where}.run", problem)
    _path(origin, f"{where}.run[1]", run[1], reserved)
    dry = entry.get("dry_run_args")
    ok, conflict = _exit_codes(origin, f"{where}.exit", entry.get("exit"))
    pattern = entry.get("summary_pattern")
    label = entry.get("label")
    if label is not None and (not isinstance(label, str) or not label.strip()):
        raise _fail(origin, f"{where}.label", "must be a non-empty string")
    default = entry.get("summary_default")
    if default is not None and not isinstance(default, str):
        raise _fail(origin, f"{where}.summary_default", "must be a string")
    return Migration(
        id=ident,
        version=version,
        when=when,
        run=run,
        dry_run_args=None if dry is None else _strings(origin, f"{where}.dry_run_args", dry),
        exit_ok=ok,
        exit_conflict=conflict,
        summary_pattern=None
        if pattern is None
        else _regex(origin, f"{where}.summary_pattern", pattern),
        summary_default=default,
        label=label,
    )


def _ownership(origin: str, where: str, raw: object, reserved: ReservedPaths) -> OwnershipRule:
    entry = _keys(origin, where, raw, {"paths", "when", "treat_as"}, {"paths", "when"})
    paths = _strings(origin, f"{where}.paths", entry["paths"], empty=False)
    treat_as = entry.get("treat_as", ADOPTER_OWNED)
    if treat_as != ADOPTER_OWNED:
        raise _fail(origin, f"{where}.treat_as", f"must be {ADOPTER_OWNED!r}, got {treat_as!r}")
    return OwnershipRule(
        tuple(_path(origin, f"{where}.paths", p, reserved) for p in paths),
        parse_condition(origin, f"{where}.when", entry["when"], reserved),
    )


def _template(origin: str, where: str, raw: object, reserved: ReservedPaths) -> TemplateFile:
    allowed = {"target", "template", "install", "after_refresh"}
    entry = _keys(origin, where, raw, allowed, {"target", "template"})
    install = entry.get("install", "if-present")
    if install not in TEMPLATE_INSTALL:
        raise _fail(origin, f"{where}.install", f"must be if-present or always, got {install!r}")
    after = entry.get("after_refresh")
    if after is not None and not isinstance(after, str):
        raise _fail(origin, f"{where}.after_refresh", "must be a string")
    target = _path(origin, f"{where}.target", entry["target"], reserved)
    template = _path(origin, f"{where}.template", entry["template"], reserved)
    if target == template:
        raise _fail(origin, where, "target and template are the same path")
    return TemplateFile(target, template, install, after)


def _notice(origin: str, where: str, raw: object, reserved: ReservedPaths) -> Notice:
    entry = _keys(origin, where, raw, {"id", "when", "text"}, {"id", "when", "text"})
    ident = _id(origin, where, entry["id"])
    text = entry["text"]
    if not isinstance(text, str) or not text.strip():
        raise _fail(origin, f"{where} ({ident}).text", "must be a non-empty string")
    when = parse_condition(origin, f"{where} ({ident}).when", entry["when"], reserved)
    return Notice(ident, when, text)


def _post_update(origin: str, where: str, raw: object, reserved: ReservedPaths) -> PostUpdateWrite:
    allowed = {"file", "set", "keep", "only_if_exists"}
    entry = _keys(origin, where, raw, allowed, {"file", "set"})
    values = entry["set"]
    if not isinstance(values, dict) or not values:
        raise _fail(origin, f"{where}.set", "must map keys to values")
    keep = _strings(origin, f"{where}.keep", entry.get("keep", []))
    only = entry.get("only_if_exists", True)
    if not isinstance(only, bool):
        raise _fail(origin, f"{where}.only_if_exists", "must be true or false")
    return PostUpdateWrite(
        _path(origin, f"{where}.file", entry["file"], reserved), tuple(values.items()), keep, only
    )


def _trailer(origin: str, where: str, raw: object, reserved: ReservedPaths) -> TrailerCheck:
    entry = _keys(origin, where, raw, {"trailer_key", "label"}, {"trailer_key"})
    key = entry["trailer_key"]
    if not isinstance(key, str) or not _TRAILER_KEY.fullmatch(key):
        raise _fail(origin, f"{where}.trailer_key", f"{key!r} is not a git trailer key")
    label = entry.get("label", "Trailer invalidations")
    if not isinstance(label, str) or not label.strip():
        raise _fail(origin, f"{where}.label", "must be a non-empty string")
    return TrailerCheck(key, label)


def _unique(origin: str, key: str, ids: list[str]) -> None:
    seen: set[str] = set()
    for index, ident in enumerate(ids):
        if ident in seen:
            raise _fail(origin, f"{key}[{index}]", f"id {ident!r} is declared twice")
        seen.add(ident)


def parse_lifecycle(
    data: dict[str, Any], origin: str, reserved: ReservedPaths = NOTHING_RESERVED
) -> Lifecycle:
    """The lifecycle declarations among a manifest's (or ``tether.toml``'s) keys. Every
    project path they name (a condition's file, a hand-off's paths, a template and its
    target, a post-update file, a migration's program) passes the one path rule and may not
    fall in ``reserved``, exactly as the release's shipped files."""
    parsers = {
        "migrations": _migration,
        "ownership": _ownership,
        "templates": _template,
        "notices": _notice,
        "post_update": _post_update,
        "trailer_invalidations": _trailer,
    }
    parsed: dict[str, tuple[Any, ...]] = {}
    for key, parse in parsers.items():
        raw = data.get(key)
        if raw is None:
            parsed[key] = ()
            continue
        if not isinstance(raw, list):
            raise LifecycleError(f"{origin}: '{key}' must be a list")
        parsed[key] = tuple(
            parse(origin, f"{key}[{i}]", item, reserved) for i, item in enumerate(raw)
        )
    _unique(origin, "migrations", [m.id for m in parsed["migrations"]])
    _unique(origin, "notices", [n.id for n in parsed["notices"]])
    return Lifecycle(**parsed)


def check_against_files(lifecycle: Lifecycle, files: set[str], origin: str) -> None:
    """What a release must ship for its declarations to work: each migration's program and
    each template; a template's target is installed from it, so it is never a listed file."""
    for index, migration in enumerate(lifecycle.migrations):
        if migration.operand not in files:
            raise LifecycleError(
                f"{origin}: migrations[{index}] ({migration.id}): {migration.operand} is not a "
                "shipped file"
            )
    for index, template in enumerate(lifecycle.templates):
        if template.template not in files:
            raise LifecycleError(
                f"{origin}: templates[{index}]: {template.template} is not a shipped file"
            )
        if template.target in files:
            raise LifecycleError(
                f"{origin}: templates[{index}]: {template.target} is a shipped file; a "
                "template's target is installed from the template, not listed in files"
            )
