"""Override families: packages that must move together through their own command.

Some families (a framework and its plugins, a CLI and its codemods) are not updated by
bumping each version: their maintainers ship a command. A YAML file lists them::

    - id: storybook
      match: ["storybook", "@storybook/*"]
      command: "npx storybook@{version} upgrade --yes"
      versionSource: "target-of:storybook"      # | "max-target-of:<glob>" | "latest"
      fallbackVersionSource: latest            # optional
      notes: "..."                             # optional
      reference: "https://..."                 # optional

The first entry whose globs match a package wins. Each entry gets one decision for the run:
``run-override`` (run the command once in every affected project instead of the generic
bump), ``skip-matched`` (leave the matched packages alone) or ``force-generic`` (ignore the
entry). Only commands from this file ever run, split like a shell would split them but never
given to a shell; ``{version}`` is filled in per argument after splitting, so a version
string can never become shell syntax.
"""

from __future__ import annotations

import fnmatch
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.deps.align import PackagePlan, Plan
from tether.deps.targets import dialect_of
from tether.errors import TetherError, UsageError
from tether.fsio import cannot_read, read_bytes
from tether.report.deps import override_dropped_warning

ACTIONS = ("run-override", "skip-matched", "force-generic")
DEFAULT_FILE = "tether/deps-overrides.yaml"  # under the user's config folder
_FIELDS = {"id", "match", "command", "versionSource", "fallbackVersionSource", "notes", "reference"}
_REQUIRED = ("id", "match", "command", "versionSource")


@dataclass(frozen=True)
class OverrideEntry:
    id: str
    match: tuple[str, ...]
    command: str
    version_source: str
    fallback: str | None = None
    notes: str = ""
    reference: str = ""

    def matches(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.match)

    @property
    def needs_version(self) -> bool:
        return "{version}" in self.command


@dataclass
class BoundOverride:
    """An entry with the plan's packages it took, its version and the person's decision."""

    entry: OverrideEntry
    packages: list[PackagePlan]
    version: str | None
    projects: list[str]  # affected projects, registry order
    decision: str = "run-override"

    def argv(self) -> list[str]:
        return render_command(self.entry.command, self.version)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.entry.id,
            "decision": self.decision,
            "packages": [p.label for p in self.packages],
            "version": self.version,
            "command": shlex.join(self.argv()),
            "projects": self.projects,
            "notes": self.entry.notes,
            "reference": self.entry.reference,
        }


def render_command(command: str, version: str | None) -> list[str]:
    return [token.replace("{version}", version or "") for token in shlex.split(command)]


# --- loading -----------------------------------------------------------------------------


def default_path() -> Path | None:
    """The documented place, ``$XDG_CONFIG_HOME/tether/deps-overrides.yaml``, when a file is
    there. Never the folder the command runs in: a file found there by chance would run its
    commands."""
    from tether.runs.registry import config_home

    path = config_home() / DEFAULT_FILE
    return path if path.is_file() else None


def undecided(bound: list[BoundOverride], decisions: dict[str, str]) -> None:
    """Under ``--yes`` every override needs its ``--override-action`` (as conflicts need
    ``--conflict-policy``): running a command nobody chose is not a default."""
    missing = [b.entry.id for b in bound if b.entry.id not in decisions]
    if missing:
        raise UsageError(
            f"{len(missing)} override(s) apply to this plan ({', '.join(missing)}): choose "
            "--override-action ID=run-override|skip-matched|force-generic for each "
            "(nothing was written)"
        )


def load(path: Path) -> list[OverrideEntry]:
    try:
        body = read_bytes(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise TetherError(cannot_read(path, error, "the overrides file")) from None
    document = _yaml(path, body)
    # The top level is the list itself, or a mapping holding it under "overrides".
    entries = document.get("overrides") if isinstance(document, dict) else document
    if not isinstance(entries, list):
        raise TetherError(f"overrides file {path}: expected a list of entries")
    loaded = [_entry(path, index, raw) for index, raw in enumerate(entries)]
    _unique_ids(path, loaded)
    return loaded


def _yaml(path: Path, body: str) -> Any:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    from tether.parselimits import NESTED_TOO_DEEPLY, shape_problem

    try:
        loaded = YAML(typ="safe", pure=True).load(body)
    except RecursionError:
        raise TetherError(f"overrides file {path}: {NESTED_TOO_DEEPLY}") from None
    except MarkedYAMLError as error:
        mark = error.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = error.problem or error.context or "parse error"
        raise TetherError(f"overrides file {path}: invalid YAML: {problem}{where}") from None
    except YAMLError as error:
        raise TetherError(f"overrides file {path}: invalid YAML: {error}") from None
    beyond = shape_problem(loaded)
    if beyond is not None:
        raise TetherError(f"overrides file {path}: {beyond}")
    return loaded


def _entry(path: Path, index: int, raw: Any) -> OverrideEntry:
    where = f"overrides file {path}: entry {index + 1}"
    if not isinstance(raw, dict):
        raise TetherError(f"{where}: expected a mapping")
    unknown = sorted(set(raw) - _FIELDS)
    if unknown:
        raise TetherError(f"{where}: unknown field {unknown[0]!r}")
    for name in _REQUIRED:
        if name not in raw:
            raise TetherError(f"{where}: missing field {name!r}")
    match = raw["match"]
    if isinstance(match, str):
        match = [match]
    if not isinstance(match, list) or not match or not all(isinstance(m, str) for m in match):
        raise TetherError(f"{where}: 'match' must be a list of globs")
    command = str(raw["command"])
    try:
        if not shlex.split(command):
            raise ValueError("empty command")
    except ValueError as error:
        raise TetherError(f"{where}: 'command' cannot be split: {error}") from None
    for key in ("versionSource", "fallbackVersionSource"):
        if raw.get(key) is not None:
            _check_source(where, str(raw[key]))
    return OverrideEntry(
        str(raw["id"]),
        tuple(match),
        command,
        str(raw["versionSource"]),
        str(raw["fallbackVersionSource"]) if raw.get("fallbackVersionSource") else None,
        str(raw.get("notes") or ""),
        str(raw.get("reference") or ""),
    )


def _check_source(where: str, source: str) -> None:
    if source == "latest" or (
        source.startswith(("target-of:", "max-target-of:")) and source.partition(":")[2]
    ):
        return
    raise TetherError(
        f"{where}: version source {source!r} is not target-of:<name>, "
        "max-target-of:<glob> or latest"
    )


def _unique_ids(path: Path, entries: list[OverrideEntry]) -> None:
    seen: set[str] = set()
    for entry in entries:
        if entry.id in seen:
            raise TetherError(f"overrides file {path}: id {entry.id!r} appears twice")
        seen.add(entry.id)


# --- binding to a plan -------------------------------------------------------------------


def bind(entries: list[OverrideEntry], plan: Plan) -> list[BoundOverride]:
    """Give each package of the post-policy plan to the first entry matching it; resolve
    each {version}.

    Only packages that still move after the conflict policy are bound: a package the policy
    dropped (or that moves nowhere) runs no command and needs no decision. An entry whose
    ``{version}`` cannot be resolved is dropped with a warning (its packages then get the
    generic bump); an entry that matches nothing planned is left out.
    """
    taken: dict[str, list[PackagePlan]] = {}
    for package in moving(plan):
        entry = next((e for e in entries if e.matches(package.name)), None)
        if entry is not None:
            taken.setdefault(entry.id, []).append(package)
    bound = []
    for entry in entries:
        packages = taken.get(entry.id)
        if not packages:
            continue
        version = _resolve(entry, plan, packages)
        if entry.needs_version and version is None:
            plan.warnings.append(
                override_dropped_warning(entry.id, entry.version_source, entry.fallback)
            )
            continue
        bound.append(BoundOverride(entry, packages, version, _affected(plan, packages)))
    return bound


def _resolve(entry: OverrideEntry, plan: Plan, packages: list[PackagePlan]) -> str | None:
    for source in (entry.version_source, entry.fallback):
        if source is not None:
            found = version_from(source, plan, packages)
            if found is not None:
                return found
    return None


def moving(plan: Plan) -> list[PackagePlan]:
    """The post-policy plan: packages nothing skipped that move in at least one project."""
    return [
        p
        for p in plan.packages
        if p.skipped_by is None and any(planned.changes for planned in p.occurrences)
    ]


def version_from(source: str, plan: Plan, packages: list[PackagePlan]) -> str | None:
    """``{version}`` from the post-policy plan's proposed targets (never a dropped package's)."""
    kind, _, argument = source.partition(":")
    if kind == "target-of":
        named = [p for p in moving(plan) if p.name == argument]
        default_line = [p for p in named if not p.catalog] or named
        return default_line[0].proposed_version if default_line else None
    if kind == "max-target-of":
        matched = [p for p in moving(plan) if fnmatch.fnmatchcase(p.name, argument)]
        return _highest(matched)
    if kind == "latest":
        first = packages[0]
        info = plan.scan.infos.get((first.ecosystem, first.name))  # type: ignore[arg-type]
        return info.latest if info is not None else None
    return None


def _highest(packages: list[PackagePlan]) -> str | None:
    best: str | None = None
    for package in packages:
        dialect = dialect_of(package.ecosystem)  # type: ignore[arg-type]
        version = package.proposed_version
        if best is None or dialect.compare(version, best) > 0:
            best = version
    return best


def _affected(plan: Plan, packages: list[PackagePlan]) -> list[str]:
    projects = {
        planned.resolved.occurrence.project
        for package in packages
        for planned in package.occurrences
        if planned.changes
    }
    return [p.name for p in plan.scan.scanned if p.name in projects]


def decide(bound: list[BoundOverride], decisions: dict[str, str]) -> None:
    """Record one decision per entry and mark the packages it takes or skips."""
    for override in bound:
        override.decision = decisions.get(override.entry.id, override.decision)
        for package in override.packages:
            if override.decision == "run-override":
                package.override = override.entry.id
            elif override.decision == "skip-matched" and package.skipped_by is None:
                package.skipped_by = f"override:{override.entry.id}"


def parse_decisions(values: list[str] | None, bound: list[BoundOverride]) -> dict[str, str]:
    """``--override-action ID=ACTION`` flags, checked against the entries that apply."""
    known = {b.entry.id for b in bound}
    decisions: dict[str, str] = {}
    for value in values or ():
        ident, eq, action = value.partition("=")
        if not eq or action not in ACTIONS:
            raise UsageError(
                f"--override-action {value!r}: expected ID=ACTION, ACTION one of "
                + ", ".join(ACTIONS)
            )
        if ident not in known:
            raise UsageError(
                f"--override-action: no override {ident!r} applies to this plan"
                + (f" (applicable: {', '.join(sorted(known))})" if known else "")
            )
        decisions[ident] = action
    return decisions


def without_excluded(bound: list[BoundOverride], plan: Plan) -> list[BoundOverride]:
    """After a pick-subset: an entry keeps only the packages the person did not exclude and
    the projects that still use one of them; an entry left with none is dropped."""
    kept = []
    for override in bound:
        remaining = [p for p in override.packages if p.skipped_by != "user"]
        for package in override.packages:
            if package.skipped_by == "user" and package.override == override.entry.id:
                package.override = None  # excluded, so no longer the entry's to move
        override.packages = remaining
        override.projects = _affected(plan, remaining) if remaining else []
        if override.projects:
            kept.append(override)
    return kept


def commands_for(bound: list[BoundOverride], project: str) -> list[BoundOverride]:
    return [b for b in bound if b.decision == "run-override" and project in b.projects]


def keep(bound: list[BoundOverride]) -> list[BoundOverride]:
    return [b for b in bound if b.decision != "force-generic"]
