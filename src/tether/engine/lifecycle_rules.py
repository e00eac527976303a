"""Pure decisions behind the lifecycle declarations (docs/lifecycle.md): which migrations an
update runs, what a program's exit status means, whether a condition holds on given file
contents, how a template-installed file is classified and what a post-update write leaves."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from tether.model.lifecycle_declarations import Condition, Migration, PostUpdateWrite
from tether.versions import compare_versions, is_version

# A reader gives a project path's text, or None when there is no such regular file.
Reader = Callable[[str], str | None]
Exists = Callable[[str], bool]
# Whether a release's pattern matches a text (multiline), None when that could not be told
# within the bound on release patterns (docs/security.md); and the pattern's capture in a
# text (its first group, else the whole match), None when it does not match.
Matcher = Callable[[str, str], bool | None]
Capturer = Callable[[str, str], str | None]


def frontmatter(text: str) -> dict[str, str]:
    """The ``key: value`` lines of a leading ``---`` block (scalars only, quotes dropped)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    found: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() in ("---", "..."):
            return found
        key, sep, value = line.partition(":")
        if sep and key and not key[0].isspace():
            found[key.strip()] = value.strip().strip("'\"")
    return {}  # never closed: not frontmatter


def condition_holds(
    condition: Condition, read: Reader, exists: Exists, match: Matcher
) -> bool | None:
    """Whether ``condition`` holds; None when a pattern in it could not be matched within
    its bound (``not`` of an undecided condition is undecided too)."""
    if condition.negated is not None:
        inner = condition_holds(condition.negated, read, exists, match)
        return None if inner is None else not inner
    if condition.exists is not None:
        return exists(condition.exists)
    text = read(condition.file or "")
    if text is None:
        return False
    if condition.matches is not None:
        return match(condition.matches, text)
    found = frontmatter(text)
    return all(_same_scalar(found.get(key), want) for key, want in condition.frontmatter)


def _same_scalar(found: str | None, want: str) -> bool:
    if found is None:
        return False
    if want in ("true", "false"):
        return found.lower() == want
    return found == want


# --------------------------------------------------------------------------- migrations


def _crosses(version: str, old: str, new: str) -> bool:
    """old < version <= new; an old that is not a version (a first update from an unknown
    install) is taken as older than every release."""
    if not is_version(new) or compare_versions(version, new) > 0:
        return False
    return not is_version(old) or compare_versions(old, version) < 0


def _order(left: Migration, right: Migration) -> int:
    if left.version is None or right.version is None:
        return (left.version is None) - (right.version is None)
    return compare_versions(left.version, right.version)


def due_migrations(
    migrations: tuple[Migration, ...],
    old: str,
    new: str,
    finished: Mapping[str, str],
) -> list[Migration]:
    """The migrations an update from ``old`` to ``new`` runs, in order: version order across
    versions, declaration order within one, those without a version (every update) last.
    ``finished`` maps a migration id an earlier update ran to its status: an ``ok`` one never
    runs again; a failed one runs again once the update reaches its version."""
    due = []
    for migration in migrations:
        status = finished.get(migration.id)
        if migration.version is None:
            due.append(migration)
        elif status is None:
            if _crosses(migration.version, old, new):
                due.append(migration)
        elif status != "ok" and _crosses(migration.version, "", new):
            due.append(migration)
    return sorted(due, key=functools.cmp_to_key(_order))  # sorted() is stable


def exit_status(migration: Migration, exit_code: int | None) -> str:
    """ok, conflict or error, by the migration's declared exit contract."""
    if exit_code is not None and exit_code in migration.exit_ok:
        return "ok"
    if exit_code is not None and exit_code in migration.exit_conflict:
        return "conflict"
    return "error"


def summary_capture(migration: Migration, output: str, capture: Capturer) -> str | None:
    """The pattern's first group (or whole match) in the program's output, else the
    declared default."""
    if migration.summary_pattern is None:
        return None
    found = capture(migration.summary_pattern, output)
    return migration.summary_default if found is None else found


def condition_patterns(condition: Condition) -> list[tuple[str, str]]:
    """The (file, pattern) pairs a condition matches, to match them all at once."""
    if condition.negated is not None:
        return condition_patterns(condition.negated)
    if condition.matches is not None and condition.file is not None:
        return [(condition.file, condition.matches)]
    return []


# --------------------------------------------------------------------------- templates


def classify_template(installed: bytes | None, old: bytes | None, new: bytes) -> str:
    """missing, in_sync, clean or conflict (see docs/lifecycle.md)."""
    if installed is None:
        return "missing"
    if installed == new or (old is not None and old == new):
        return "in_sync"
    if old is not None and installed == old:
        return "clean"
    return "conflict"


# --------------------------------------------------------------------------- post-update writes


def post_update_document(
    write: PostUpdateWrite, existing: Mapping[str, Any], values: Mapping[str, str]
) -> dict[str, Any]:
    """The JSON object a post-update write leaves: the kept keys the file had, then the set
    keys, each string value with its placeholders filled in from ``values``."""
    doc = {key: existing[key] for key in write.keep if key in existing}
    for key, value in write.set:
        doc[key] = fill(value, values)
    return doc


def fill(value: Any, values: Mapping[str, str]) -> Any:
    if not isinstance(value, str):
        return value
    if value == "{now_unix}":
        return int(values["now_unix"])
    for name, text in values.items():
        value = value.replace("{" + name + "}", text)
    return value
