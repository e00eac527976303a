"""``state.json``: what tether installed, the baseline for every later update."""

from __future__ import annotations

import json
from pathlib import Path

from tether.errors import TetherError
from tether.fsio import atomic_write, cannot_read, read_bytes
from tether.model.manifest import CLASSES_BY_NAME, FileClass
from tether.parselimits import json_loads
from tether.pathrules import NOTHING_RESERVED, ReservedPaths, project_path_problem
from tether.valueclass import field, valueclass

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which status and check pay
if TYPE_CHECKING:
    from typing import Any

    from tether.profiles import Profile

STATE_SCHEMA = 1


@valueclass(frozen=True)
class FileRecord:
    """One installed path. ``sha256`` is always the release's bytes (the baseline),
    never the adopter's, so a keep-mine choice holds on the next update."""

    cls: FileClass
    sha256: str
    mode: int = 0o644


@valueclass(frozen=True)
class ConflictRecord:
    """A conflict an update left for a person."""

    # "markers" | "patch" | "theirs-copy" (L stored beside, A kept; older records: "theirs")
    style: str
    artifact: str  # project-relative path of the file a person must look at
    version: str  # the release the conflict was against


@valueclass(frozen=True)
class Leftover:
    """A file a release stopped shipping that an update left in the project ("Delete?"):
    listed until the adopter deletes it or takes it over (``tether own``)."""

    sha256: str  # the bytes the last release that shipped it had: unmodified when equal
    version: str  # the release that no longer ships it


@valueclass(frozen=True)
class AppliedMigration:
    """A migration an update ran: ``status`` ok (never run again), or conflict / error (the
    next update runs it again)."""

    version: str  # the release it belongs to ("" for one that runs on every update)
    status: str
    at: str
    run_id: str = ""


@valueclass()
class State:
    """tether's record of the install: the release, its files, what updates left open."""

    profile: str
    upstream: str
    source: str
    version: str
    manifest_sha256: str
    files: dict[str, FileRecord]
    sentinels: list[str] = field(default_factory=list)
    customised_at_install: list[str] = field(default_factory=list)
    # Paths whose baseline did not advance because their markers were still unresolved.
    held: list[str] = field(default_factory=list)
    conflicts: dict[str, ConflictRecord] = field(default_factory=dict)
    installed_at: str = ""
    updated_at: str = ""
    applied_migrations: dict[str, AppliedMigration] = field(default_factory=dict)
    leftovers: dict[str, Leftover] = field(default_factory=dict)


def state_to_json(state: State) -> dict[str, Any]:
    return {
        "schema_version": STATE_SCHEMA,
        "profile": state.profile,
        "upstream": state.upstream,
        "source": state.source,
        "version": state.version,
        "manifest_sha256": state.manifest_sha256,
        "installed_at": state.installed_at,
        "updated_at": state.updated_at,
        "sentinels": sorted(state.sentinels),
        "customised_at_install": sorted(state.customised_at_install),
        "held": sorted(state.held),
        "files": {
            path: {"class": rec.cls.value, "sha256": rec.sha256, "mode": oct(rec.mode)}
            for path, rec in sorted(state.files.items())
        },
        "conflicts": {
            path: {"style": c.style, "artifact": c.artifact, "version": c.version}
            for path, c in sorted(state.conflicts.items())
        },
        "applied_migrations": {
            ident: {"version": m.version, "status": m.status, "at": m.at, "run_id": m.run_id}
            for ident, m in sorted(state.applied_migrations.items())
        },
        "leftovers": {
            path: {"sha256": left.sha256, "version": left.version}
            for path, left in sorted(state.leftovers.items())
        },
    }


def _file_record(origin: str, path: str, raw: Any) -> FileRecord:
    try:
        return FileRecord(
            CLASSES_BY_NAME[raw["class"]], str(raw["sha256"]), int(str(raw.get("mode", "0o644")), 0)
        )
    except (KeyError, TypeError, ValueError):
        raise TetherError(f"{origin}: files[{path!r}] is malformed; restore it from git") from None


def state_from_json(data: Any, origin: str, profile: Profile | None = None) -> State:
    """The state in ``data``; every path it names checked (see ``check_state_paths``)."""
    if not isinstance(data, dict) or data.get("schema_version") != STATE_SCHEMA:
        raise TetherError(f"{origin}: not a tether state file (schema_version {STATE_SCHEMA})")
    state = _state(data, origin)
    check_state_paths(state, origin, profile)
    return state


def _state(data: dict[str, Any], origin: str) -> State:
    try:
        files = {p: _file_record(origin, p, r) for p, r in data["files"].items()}
        conflicts = {
            p: ConflictRecord(str(c["style"]), str(c["artifact"]), str(c["version"]))
            for p, c in data.get("conflicts", {}).items()
        }
        return State(
            profile=str(data["profile"]),
            upstream=str(data["upstream"]),
            source=str(data["source"]),
            version=str(data["version"]),
            manifest_sha256=str(data["manifest_sha256"]),
            files=files,
            sentinels=list(data.get("sentinels", [])),
            customised_at_install=list(data.get("customised_at_install", [])),
            held=list(data.get("held", [])),
            conflicts=conflicts,
            installed_at=str(data.get("installed_at", "")),
            updated_at=str(data.get("updated_at", "")),
            applied_migrations={
                str(ident): AppliedMigration(
                    str(m["version"]), str(m["status"]), str(m["at"]), str(m.get("run_id", ""))
                )
                for ident, m in data.get("applied_migrations", {}).items()
            },
            leftovers={
                str(path): Leftover(str(left["sha256"]), str(left["version"]))
                for path, left in data.get("leftovers", {}).items()
            },
        )
    except (KeyError, TypeError, AttributeError) as error:
        raise TetherError(f"{origin}: state file is missing {error}; restore it from git") from None


def _path_problem(path: object, reserved: ReservedPaths) -> str | None:
    if not isinstance(path, str):
        return "not a string"
    return project_path_problem(path) or reserved.problem(path)


def _artifact_problem(path: str, artifact: str, merge_dir: str | None) -> str | None:
    """A conflict's artifact is the file itself (markers) or lies in the merge folder."""
    problem = project_path_problem(artifact)
    if problem or artifact == path:
        return problem
    if merge_dir is not None and not artifact.startswith(merge_dir + "/"):
        return f"a conflict artifact is the file itself or lies in {merge_dir}/"
    return None


def check_state_paths(state: State, origin: str, profile: Profile | None = None) -> None:
    """Every path of a state file passes the one path rule, and none falls in a path tether
    or ``profile`` keeps for itself (conflict artifacts: in its merge folder). A committed
    state arrives through pull requests: a record naming ``../victim.txt`` must stop the
    run before anything reads, writes or deletes it. One line naming the first bad record."""
    reserved = profile.reserved_paths() if profile is not None else NOTHING_RESERVED
    merge_dir = profile.merge_dir if profile is not None else None
    named: list[tuple[str, str]] = [("file record", p) for p in state.files]
    named += [("sentinel", p) for p in state.sentinels]
    named += [("held path", p) for p in state.held]
    named += [("customised path", p) for p in state.customised_at_install]
    named += [("conflict record", p) for p in state.conflicts]
    named += [("leftover", p) for p in state.leftovers]
    for what, path in named:
        problem = _path_problem(path, reserved)
        if problem:
            raise TetherError(f"{origin}: {what} {path!r}: {problem}")
    for path, conflict in state.conflicts.items():
        problem = _artifact_problem(path, conflict.artifact, merge_dir)
        if problem:
            raise TetherError(
                f"{origin}: conflict record {path!r}: artifact {conflict.artifact!r}: {problem}"
            )


def load_state(path: Path, profile: Profile | None = None) -> State | None:
    """The state at ``path``; None when there is none. ``profile``: the project's, whose
    reserved paths no record may name (see ``check_state_paths``)."""
    try:
        raw = read_bytes(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise TetherError(cannot_read(path, error, "state")) from None
    try:
        data = json_loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise TetherError(
            f"{path}: state file does not parse ({error}); restore it from git"
        ) from None
    try:
        return state_from_json(data, str(path), profile)
    except RecursionError:  # a record's value nested just short of the parser's limit
        raise TetherError(f"{path}: state file is nested too deeply; restore it from git") from None


def render_state(doc: dict[str, Any]) -> str:
    """JSON with one line per top-level key and per file record: easy to read and to diff,
    and built by the C encoder a record at a time (an indented dump of tens of thousands of
    records runs in pure Python and takes ten times as long)."""
    rows = []
    for key, value in doc.items():
        if isinstance(value, dict) and value and all(_flat(v) for v in value.values()):
            # One C-level dump of the whole map, then a line break after each record: a '}'
            # followed by ', "' only occurs between records (inside a string the quote would
            # be escaped, and flat records hold no '}' of their own).
            inner = json.dumps(value, separators=(", ", ": "))[1:-1]
            inner = inner.replace('}, "', '},\n    "')
            rows.append(f"  {json.dumps(key)}: {{\n    {inner}\n  }}")
        else:
            rows.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(rows) + "\n}\n"


def _flat(record: object) -> bool:
    """A mapping of plain values: what a file or conflict record is."""
    return isinstance(record, dict) and not any(
        isinstance(v, (dict, list)) for v in record.values()
    )


def save_state(path: Path, state: State) -> None:
    atomic_write(path, render_state(state_to_json(state)).encode())
