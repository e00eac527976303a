"""The declarative files in a remit: what a change to them decides, read as policy.

A syntactically clean edit to one of these files can make a gate smaller while the diff
looks like tidying. Each check compares the file at the review's base with HEAD's
working-tree bytes and reports the loosening, a warning the change has to justify
(acknowledged with its reason):

- ``release-exclude``: an entry removed, so the file now ships (``policy/unexcluded``);
- the release manifest: a file that stops shipping (``policy/unshipped``, a warning) and
  one that starts (``policy/ships``, a suggestion naming the consequence);
- ``.claude/settings.json`` (and ``settings.local.json``): a hook registration removed
  (``policy/hook-unregistered``), a permission widened: an ``allow`` entry added, a
  ``deny`` or ``ask`` entry removed, ``defaultMode`` set to a mode that asks less
  (``policy/permission-widened``);
- ``CODEOWNERS``: a rule removed, or an owner dropped from a pattern that stays
  (``policy/owner-removed``);
- the audit roster: a member or a glob removed, so the member no longer reaches a path it
  used to (``policy/remit-narrowed``); and, whatever the base, a glob reaching the
  framework's generated build copies (``policy/remit-reaches-copies``): reviewing a copy
  decides nothing its source's review did not;
- ``token-rates.json``: an ``effective_through`` date before the day of the commit
  reviewed (``policy/stale-rate``), the one check that needs no base.

Pure functions of bytes; the caller reads the files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Final

from tether.audit.findings import Finding, rule
from tether.audit.roster import GlobSet
from tether.errors import TetherError
from tether.model.manifest import ManifestFormat, parse_manifest

SETTINGS_NAMES: Final = ("settings.json", "settings.local.json")
_QUIETER_MODES: Final = {"acceptEdits", "bypassPermissions", "dontAsk"}
_DATE: Final = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class PolicyFile:
    path: str
    kind: str  # release-exclude | settings | codeowners | roster | token-rates


MANIFESTS: Final = (".tether/manifest.json", ".gaia/manifest.json")


def policy_kind(path: str, roster_path: str) -> str | None:
    """Which policy check reads ``path``, or None."""
    name = PurePosixPath(path).name
    if path == roster_path:
        return "roster"
    if path in MANIFESTS:
        return "manifest"
    if name == "release-exclude":
        return "release-exclude"
    if name in SETTINGS_NAMES and PurePosixPath(path).parent.name == ".claude":
        return "settings"
    if name == "CODEOWNERS":
        return "codeowners"
    if name == "token-rates.json":
        return "token-rates"
    return None


def check(
    file: PolicyFile,
    before: bytes | None,
    after: bytes,
    today: str,
    roster_key: str,
    copies: Sequence[str] = (),
) -> list[Finding]:
    """The loosening ``after`` makes relative to ``before`` (None: no base version).
    ``copies`` are the tracked build copies no roster glob should reach."""
    text = after.decode("utf-8", "replace")
    old = before.decode("utf-8", "replace") if before is not None else None
    if file.kind == "token-rates":
        return list(_stale_rates(file.path, text, today))
    if file.kind == "roster" and copies:
        reaching = list(_reaches_copies(file.path, text, roster_key, copies))
        return reaching + (list(_roster(file.path, old, text, roster_key)) if old else [])
    if old is None:
        return []
    if file.kind == "release-exclude":
        return list(_removed_lines(file.path, old, text))
    if file.kind == "codeowners":
        return list(_codeowners(file.path, old, text))
    if file.kind == "settings":
        return list(_settings(file.path, old, text))
    if file.kind == "roster":
        return list(_roster(file.path, old, text, roster_key))
    if file.kind == "manifest":
        return list(_manifest(file.path, old, text))
    return []


def _finding(finding_class: str, path: str, line: int, title: str, evidence: str) -> Finding:
    return rule(finding_class).at(path, line, evidence, title=title)


def _line_of(text: str, needle: str) -> int:
    at = text.find(needle)
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def _entries(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def _removed_lines(path: str, old: str, new: str) -> Iterator[Finding]:
    kept = set(_entries(new))
    for entry in _entries(old):
        if entry not in kept:
            title = f"`{entry}` is no longer excluded from the release: it ships now"
            yield _finding("policy/unexcluded", path, 1, title, f"{path} at the base lists it")


def _owners(text: str) -> dict[str, list[str]]:
    rules: dict[str, list[str]] = {}
    for entry in _entries(text):
        pattern, *owners = entry.split()
        rules[pattern] = owners
    return rules


def _codeowners(path: str, old: str, new: str) -> Iterator[Finding]:
    before, after = _owners(old), _owners(new)
    for pattern, owners in before.items():
        if pattern not in after:
            title = f"the CODEOWNERS rule for `{pattern}` was removed ({' '.join(owners)})"
            yield _finding("policy/owner-removed", path, 1, title, f"{path} at the base has it")
            continue
        dropped = [owner for owner in owners if owner not in after[pattern]]
        if dropped:
            title = f"`{pattern}` no longer requires {' '.join(dropped)}"
            line = _line_of(new, pattern)
            yield _finding("policy/owner-removed", path, line, title, f"{path} at the base")


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _registrations(document: Any) -> set[tuple[str, str, str]]:
    found: set[tuple[str, str, str]] = set()
    hooks = document.get("hooks") if isinstance(document, dict) else None
    for event, groups in hooks.items() if isinstance(hooks, dict) else []:
        for group in groups if isinstance(groups, list) else []:
            matcher = str(group.get("matcher", "")) if isinstance(group, dict) else ""
            entries = group.get("hooks") if isinstance(group, dict) else None
            for entry in entries if isinstance(entries, list) else []:
                if isinstance(entry, dict) and isinstance(entry.get("command"), str):
                    found.add((str(event), matcher, entry["command"]))
    return found


def _permissions(document: Any, key: str) -> set[str]:
    permissions = document.get("permissions") if isinstance(document, dict) else None
    values = permissions.get(key) if isinstance(permissions, dict) else None
    return {str(v) for v in values} if isinstance(values, list) else set()


def _mode(document: Any) -> str | None:
    permissions = document.get("permissions") if isinstance(document, dict) else None
    mode = permissions.get("defaultMode") if isinstance(permissions, dict) else None
    return mode if isinstance(mode, str) else None


def _settings(path: str, old: str, new: str) -> Iterator[Finding]:
    before, after = _json(old), _json(new)
    if before is None or after is None:
        return  # an unreadable settings file is the shell run's error, named there
    for event, matcher, command in sorted(_registrations(before) - _registrations(after)):
        where = f"{event}" + (f" ({matcher})" if matcher else "")
        title = f"the {where} hook `{command}` is no longer registered"
        yield _finding("policy/hook-unregistered", path, 1, title, f"{path} at the base has it")
    for entry in sorted(_permissions(after, "allow") - _permissions(before, "allow")):
        title = f"`{entry}` is now allowed without asking"
        line = _line_of(new, json.dumps(entry))
        yield _finding("policy/permission-widened", path, line, title, f"{path} at HEAD")
    for key in ("deny", "ask"):
        for entry in sorted(_permissions(before, key) - _permissions(after, key)):
            title = f"`{entry}` was removed from permissions.{key}"
            yield _finding("policy/permission-widened", path, 1, title, f"{path} at the base")
    mode = _mode(after)
    if mode in _QUIETER_MODES and mode != _mode(before):
        title = f"permissions.defaultMode is now `{mode}`"
        line = _line_of(new, "defaultMode")
        yield _finding("policy/permission-widened", path, line, title, f"{path} at HEAD")


def _remits(text: str, key: str) -> dict[str, list[str]] | None:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        document = YAML(typ="safe").load(text)
    except (YAMLError, RecursionError):
        return None
    members = document.get(key) if isinstance(document, dict) else None
    found: dict[str, list[str]] = {}
    for item in members if isinstance(members, list) else []:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            globs = item.get("globs")
            found[item["name"]] = [str(g) for g in globs] if isinstance(globs, list) else []
    return found


def _roster(path: str, old: str, new: str, key: str) -> Iterator[Finding]:
    before, after = _remits(old, key), _remits(new, key)
    if before is None or after is None:
        return  # an unreadable roster is every command's error, named there
    for member, globs in before.items():
        if member not in after:
            title = f"member `{member}` was removed: nobody reviews {', '.join(globs)} now"
            yield _finding("policy/remit-narrowed", path, 1, title, f"{path} at the base")
            continue
        for glob in globs:
            if glob not in after[member]:
                title = f"`{member}` no longer reaches `{glob}`"
                line = _line_of(new, f"name: {member}")
                yield _finding("policy/remit-narrowed", path, line, title, f"{path} at the base")


def _reaches_copies(path: str, text: str, key: str, copies: Sequence[str]) -> Iterator[Finding]:
    for member, globs in (_remits(text, key) or {}).items():
        for glob in globs:
            reached = [copy for copy in copies if GlobSet([glob]).matches(copy)]
            if reached:
                title = f"`{member}`'s glob `{glob}` reaches the generated copy {reached[0]}" + (
                    f" and {len(reached) - 1} more" if len(reached) > 1 else ""
                )
                line = _line_of(text, glob)
                yield _finding("policy/remit-reaches-copies", path, line, title, f"{path} at HEAD")


def _shipped(path: str, text: str) -> set[str] | None:
    fmt = ManifestFormat.GAIA if path.startswith(".gaia/") else ManifestFormat.NATIVE
    try:
        return set(parse_manifest(_json(text), path, fmt).files)
    except TetherError:
        return None  # a malformed manifest is every update's error, named there


def _manifest(path: str, old: str, new: str) -> Iterator[Finding]:
    before, after = _shipped(path, old), _shipped(path, new)
    if before is None or after is None:
        return
    for gone in sorted(before - after):
        title = f"{gone} stops shipping: the release no longer updates it"
        yield _finding("policy/unshipped", path, 1, title, f"{path} at the base lists it")
    for added in sorted(after - before):
        title = f"{added} now ships to every adopter"
        line = _line_of(new, json.dumps(added))
        yield _finding("policy/ships", path, line, title, f"{path} at HEAD lists it")


def _dates(document: Any, trail: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(document, dict):
        for key, value in document.items():
            here = f"{trail}.{key}" if trail else str(key)
            if key == "effective_through" and isinstance(value, str):
                yield trail or "(top level)", value
            else:
                yield from _dates(value, here)
    elif isinstance(document, list):
        for index, value in enumerate(document):
            yield from _dates(value, f"{trail}[{index}]")


def _stale_rates(path: str, text: str, today: str) -> Iterator[Finding]:
    document = _json(text)
    for where, date in _dates(document):
        if _DATE.match(date) and date < today:
            title = f"{where}: effective_through {date} is before {today} (the commit's day)"
            line = _line_of(text, date)
            yield _finding("policy/stale-rate", path, line, title, f"{path} at HEAD")
