"""Release notes between each bump's current and target versions (``tether deps notes``).

Two sources, both read the same way every time:

* the registry: every version in the range with its publish time and deprecation message,
  and the repository the package names. ``deps plan`` keeps these, from the packuments it
  fetched anyway, in the plan folder's ``package-metadata.json``;
* the repository's release pages: GitHub's releases API (the releases whose tag names a
  version in the range) and, when none does, its ``CHANGELOG.md`` (the package's own folder
  first, for a monorepo) cut at its version headings.

Each bump's notes are kept in the plan folder
(``notes/<ecosystem>/<name>/<from>_to_<to>.json``, bodies included); the next run reads
them there and asks nothing. A bump whose release pages could not be asked (network,
timeout, server error, an answer that is not JSON) is recorded as unavailable and not kept,
so the next run asks again; what a server did answer (no such repository, no release in the
range, a changelog without version headings) is kept.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import urllib.parse
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from tether.deps.bumps import BumpItem, bare_version, bump_list, compare
from tether.deps.model import Ecosystem, PackageInfo
from tether.deps.plans import read_json
from tether.deps.registries import FetchError, HttpClient
from tether.deps.targets import dialect_of
from tether.errors import TetherError
from tether.process import map_in_threads
from tether.report.deps import (
    NO_REGISTRY_METADATA,
    NO_REPOSITORY_NAMED,
    changelog_unread,
    changelog_unreadable,
    changelog_without_entry,
    no_release_notes,
    no_repository_on_github,
    not_on_github,
    pages_unread,
)

Doc = dict[str, Any]
DEFAULT_API = "https://api.github.com"
NOTES_DIR = "notes"
PER_PAGE = 100
MAX_PAGES = 3  # the newest 300 releases: older ones are rarely between a current and a target
BODY_LIMIT = 20_000  # characters of one release's (or changelog entry's) text kept
CHANGELOG_LIMIT = 2_000_000  # characters of a changelog read
# Engines come from a release index, not a packument: their repositories are known.
ENGINE_REPOSITORIES = {
    "node": "nodejs/node",
    "npm": "npm/cli",
    "pnpm": "pnpm/pnpm",
    "yarn": "yarnpkg/berry",
    "bun": "oven-sh/bun",
}


# --- the registry's part, kept at plan time ----------------------------------------------


def _ecosystem(value: str) -> Ecosystem:
    return "pypi" if value == "pypi" else "npm" if value == "npm" else "engine"


def in_range(version: str, low: str, high: str, ecosystem: str) -> bool:
    """``low < version <= high``, prereleases left out (their notes are not the range's)."""
    try:
        if dialect_of(_ecosystem(ecosystem)).is_prerelease(version):
            return False
    except (ValueError, TypeError, AttributeError):
        return False
    return compare(low, version, ecosystem) < 0 <= compare(high, version, ecosystem)


def metadata_document(plan: Doc, infos: Mapping[tuple[Ecosystem, str], PackageInfo]) -> Doc:
    """``package-metadata.json``: for each package that moves, the repository its registry
    names and every release between its lowest current version and its highest target."""
    ranges: dict[tuple[str, str], tuple[str, str]] = {}
    for item in bump_list(plan):
        key = (item.ecosystem, item.name)
        low, high = ranges.get(key, (item.from_version, item.to_version))
        if compare(item.from_version, low, item.ecosystem) < 0:
            low = item.from_version
        if compare(item.to_version, high, item.ecosystem) > 0:
            high = item.to_version
        ranges[key] = (low, high)
    packages = []
    for (ecosystem, name), (low, high) in ranges.items():
        info = infos.get((_ecosystem(ecosystem), name))
        if info is not None:
            packages.append(_metadata_entry(info, ecosystem, low, high))
    return {"schema_version": 1, "packages": packages}


def _metadata_entry(info: PackageInfo, ecosystem: str, low: str, high: str) -> Doc:
    releases = [r for r in info.releases if in_range(r.version, low, high, ecosystem)]
    dialect = dialect_of(_ecosystem(ecosystem))
    releases.sort(key=lambda r: dialect.sort_key(r.version))
    return {
        "ecosystem": ecosystem,
        "name": info.name,
        "repository": info.repository,
        "directory": info.directory,
        "from_version": low,
        "to_version": high,
        "releases": [
            {
                "version": r.version,
                "published": r.published.isoformat() if r.published else None,
                "withdrawn": r.withdrawn,
                "note": r.note,
                "peers": list(r.peers),
            }
            for r in releases
        ],
    }


def target_peers(
    metadata: Mapping[tuple[str, str], Doc], items: Iterable[BumpItem]
) -> dict[tuple[str, str], list[str]]:
    """(ecosystem, name) → the peers its target version names, from the kept metadata."""
    found: dict[tuple[str, str], list[str]] = {}
    for item in items:
        entry = metadata.get((item.ecosystem, item.name)) or {}
        for release in entry.get("releases") or []:
            if isinstance(release, dict) and release.get("version") == item.to_version:
                peers = release.get("peers") or []
                found[(item.ecosystem, item.name)] = [str(p) for p in peers]
    return found


# --- repositories ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Repo:
    owner: str
    name: str

    @property
    def slug(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def url(self) -> str:
        return f"https://github.com/{self.slug}"


_PART = r"([A-Za-z0-9_.-]+)"
_GITHUB_URL = re.compile(
    r"^(?:git\+)?(?:(?:https?|git|ssh)://)?(?:[^@/\s]+@)?(?:www\.)?github\.com[:/]+"
    + _PART
    + "/"
    + _PART
    + r"(?:[/#?].*)?$"
)
_SHORTHAND = re.compile(r"^(?:github:)?" + _PART + "/" + _PART + r"(?:#.*)?$")


def github_repo(url: str | None) -> Repo | None:
    """The GitHub repository a registry's repository field names (a URL in any of git's
    spellings, ``github:owner/name`` or npm's ``owner/name``), or None."""
    if not url:
        return None
    text = url.strip()
    match = _GITHUB_URL.match(text) or _SHORTHAND.match(text)
    if match is None:
        return None
    owner, name = match[1], match[2].removesuffix(".git")
    if owner in (".", "..") or name in ("", ".", ".."):
        return None
    return Repo(owner, name)


def shown_repository(url: str | None) -> str | None:
    """A repository URL fit to print: its GitHub form, else the URL without credentials."""
    repo = github_repo(url)
    if repo is not None:
        return repo.url
    if not url:
        return None
    return re.sub(r"//[^@/\s]+@", "//", url)


# --- release pages ---------------------------------------------------------------------------


class Unreadable(Exception):
    """The server answered, but what it said cannot be read as notes; kept as unavailable."""


@dataclass
class ReleasePages:
    """GitHub's REST API: a repository's releases and its changelog file."""

    api: str = DEFAULT_API
    client: HttpClient = field(default_factory=HttpClient)
    token: str | None = field(default=None, repr=False)  # never shown, logged or kept

    def _get(self, path: str) -> Any | None:
        authorization = f"Bearer {self.token}" if self.token else None
        url = self.api.rstrip("/") + path
        return self.client.get_json(url, "application/vnd.github+json", authorization)

    def releases(self, repo: Repo) -> list[Doc] | None:
        """The newest releases (None: no such repository)."""
        found: list[Doc] = []
        for page in range(1, MAX_PAGES + 1):
            doc = self._get(f"/repos/{repo.slug}/releases?per_page={PER_PAGE}&page={page}")
            if doc is None:
                return None if page == 1 else found
            if not isinstance(doc, list) or not all(isinstance(r, dict) for r in doc):
                raise Unreadable(f"the release list of {repo.slug} is not a list of releases")
            found += doc
            if len(doc) < PER_PAGE:
                break
        return found

    def changelog(self, repo: Repo, directory: str | None) -> tuple[str, str] | None:
        """(path, text) of the first changelog file there is, None when there is none."""
        for path in changelog_paths(directory):
            doc = self._get(f"/repos/{repo.slug}/contents/{urllib.parse.quote(path)}")
            if doc is not None:
                return path, decode_contents(doc, f"{path} of {repo.slug}")
        return None


def changelog_paths(directory: str | None) -> list[str]:
    names = ["CHANGELOG.md"]
    folder = (directory or "").strip("/")
    return [f"{folder}/{n}" for n in names if folder] + names


def decode_contents(doc: Any, what: str) -> str:
    """The text of a contents-API answer (``{"encoding": "base64", "content": …}``)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("content"), str):
        raise Unreadable(f"{what}: the answer holds no file content")
    if doc.get("encoding", "base64") != "base64":
        raise Unreadable(f"{what}: unknown encoding {doc.get('encoding')!r}")
    try:
        raw = base64.b64decode(doc["content"])
        return raw.decode("utf-8")[:CHANGELOG_LIMIT]
    except (binascii.Error, ValueError):
        raise Unreadable(f"{what}: not base64-encoded UTF-8 text (malformed changelog)") from None


# --- matching versions -----------------------------------------------------------------------


def tag_version(tag: str, name: str, ecosystem: str) -> tuple[str, bool] | None:
    """The version a release tag names for ``name`` and whether the tag names the package
    (``name@1.2.0``, ``name-v1.2.0``) or only a version (``v1.2.0``)."""
    dialect = dialect_of(_ecosystem(ecosystem))
    base = name.rsplit("/", 1)[-1]
    prefixes = ((f"{name}@", True), (f"{base}@", True), (f"{base}-v", True), (f"{base}-", True))
    for prefix, specific in (*prefixes, ("v", False), ("", False)):
        if tag.startswith(prefix):
            candidate = tag[len(prefix) :]
            try:
                if candidate and dialect.valid(candidate):
                    return candidate, specific
            except (ValueError, TypeError, AttributeError):
                continue
    return None


def _cut(text: Any) -> str:
    body = text if isinstance(text, str) else ""
    return body if len(body) <= BODY_LIMIT else body[:BODY_LIMIT] + "\n… (cut)"


def releases_in_range(releases: Sequence[Doc], item: BumpItem, low: str) -> list[Doc]:
    """One entry per version in (low, target], from the tag that names it best."""
    chosen: dict[str, tuple[bool, Doc]] = {}
    for release in releases:
        if release.get("draft") or not isinstance(release.get("tag_name"), str):
            continue
        found = tag_version(release["tag_name"], item.name, item.ecosystem)
        if found is None:
            continue
        version, specific = found
        if not in_range(version, low, item.to_version, item.ecosystem):
            continue
        if version in chosen and (chosen[version][0] or not specific):
            continue
        chosen[version] = (
            specific,
            {
                "version": version,
                "tag": release["tag_name"],
                "title": str(release.get("name") or release["tag_name"]),
                "published": release.get("published_at"),
                "url": release.get("html_url"),
                "body": _cut(release.get("body")),
            },
        )
    return _ascending([entry for _, entry in chosen.values()], item.ecosystem)


def _ascending(entries: list[Doc], ecosystem: str) -> list[Doc]:
    dialect = dialect_of(_ecosystem(ecosystem))
    return sorted(entries, key=lambda e: dialect.sort_key(e["version"]))


_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_VERSION_TOKEN = re.compile(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z.]+)?)(?![\w])")


def changelog_sections(text: str, ecosystem: str) -> list[Doc]:
    """``{version, heading, body}`` for every heading that names a version; raises
    ``Unreadable`` when no heading does (not a changelog tether can read)."""
    dialect = dialect_of(_ecosystem(ecosystem))
    sections: list[Doc] = []
    level = 0
    for line in text.splitlines():
        heading = _HEADING.match(line)
        version = _heading_version(heading[2], ecosystem, dialect) if heading else None
        if heading and version:
            level = len(heading[1])
            sections.append({"version": version, "heading": heading[2], "lines": []})
        elif heading and sections and len(heading[1]) <= level:
            level = 0  # a heading as high as the version's ends its section
        elif sections and level:
            sections[-1]["lines"].append(line)
    if not sections:
        raise Unreadable("no heading names a version (malformed or unusual changelog)")
    return [
        {
            "version": s["version"],
            "heading": s["heading"],
            "body": _cut("\n".join(s["lines"]).strip()),
        }
        for s in sections
    ]


def _heading_version(text: str, ecosystem: str, dialect: Any) -> str | None:
    match = _VERSION_TOKEN.search(text)
    if match is None:
        return None
    version = bare_version(match[1], ecosystem)
    try:
        return version if dialect.valid(version) else None
    except (ValueError, TypeError, AttributeError):
        return None


# --- one bump's notes ------------------------------------------------------------------------


@dataclass
class BumpNotes:
    item: BumpItem
    file: str  # where they are kept, relative to the plan folder
    repository: str | None = None
    registry: list[Doc] = field(default_factory=list)
    releases: list[Doc] = field(default_factory=list)
    changelog: list[Doc] = field(default_factory=list)
    changelog_file: str | None = None
    unavailable: list[str] = field(default_factory=list)
    complete: bool = True  # every source answered: worth keeping
    source: str = "fetched"  # fetched | cache
    kept: bool = False

    def to_json(self, bodies: bool = False) -> Doc:
        out: Doc = {"name": self.item.name, "ecosystem": self.item.ecosystem}
        if self.item.catalog:
            out["catalog"] = self.item.catalog
        out.update(
            from_version=self.item.from_version,
            to_version=self.item.to_version,
            repository=self.repository,
            source=self.source,
            kept=self.kept,
            file=self.file,
            registry=self.registry,
            releases=[_without_body(r, bodies) for r in self.releases],
            changelog=[_without_body(c, bodies) for c in self.changelog],
            changelog_file=self.changelog_file,
            unavailable=self.unavailable,
        )
        return out


def _without_body(entry: Doc, bodies: bool) -> Doc:
    return dict(entry) if bodies else {k: v for k, v in entry.items() if k != "body"}


_UNSAFE = re.compile(r"[^A-Za-z0-9@._~+-]")


def notes_file(item: BumpItem) -> str:
    name = "/".join(_UNSAFE.sub("_", part) or "_" for part in item.name.split("/"))
    span = f"{_UNSAFE.sub('_', item.from_version)}_to_{_UNSAFE.sub('_', item.to_version)}"
    return f"{NOTES_DIR}/{_UNSAFE.sub('_', item.ecosystem)}/{name}/{span}.json"


def read_kept(folder: Path, item: BumpItem) -> BumpNotes | None:
    """The notes an earlier run kept for this very range, or None (a damaged file is
    fetched again)."""

    relative = notes_file(item)
    try:
        doc = read_json(folder / relative)
    except TetherError:
        return None
    if not isinstance(doc, dict) or (
        doc.get("name"),
        doc.get("from_version"),
        doc.get("to_version"),
    ) != (
        item.name,
        item.from_version,
        item.to_version,
    ):
        return None
    parts = [doc.get(k) for k in ("registry", "releases", "changelog", "unavailable")]
    if not all(isinstance(v, list) for v in parts) or not all(
        isinstance(entry, dict) and isinstance(entry.get("version"), str)
        for kind in parts[:3]
        for entry in cast(list[Any], kind)
    ):
        return None
    registry, releases, changelog, unavailable = (cast(list[Any], v) for v in parts)
    return BumpNotes(
        item,
        relative,
        doc.get("repository"),
        registry=registry,
        releases=releases,
        changelog=changelog,
        unavailable=unavailable,
        changelog_file=doc.get("changelog_file"),
        source="cache",
        kept=True,
    )


def keep(folder: Path, notes: BumpNotes) -> None:
    from tether.fsio import atomic_write

    doc = {"schema_version": 1, **notes.to_json(bodies=True)}
    for transient in ("source", "kept", "file"):
        doc.pop(transient, None)
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    atomic_write(folder / notes.file, text.encode(), durable=False)
    notes.kept = True


# --- a whole plan ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Outcome:
    value: Any = None
    problem: str = ""
    transient: bool = False


K = TypeVar("K", bound=Hashable)


def _each(ask: Callable[[K], Any], keys: Iterable[K], jobs: int) -> dict[K, _Outcome]:
    unique = list(dict.fromkeys(keys))

    def one(key: K) -> _Outcome:
        try:
            return _Outcome(ask(key))
        except Unreadable as error:
            return _Outcome(problem=str(error))
        except FetchError as error:
            return _Outcome(problem=str(error), transient=True)

    if not unique:
        return {}
    return dict(zip(unique, map_in_threads(one, unique, jobs), strict=True))


def _repository_of(item: BumpItem, meta: Doc | None) -> str | None:
    if meta is not None and meta.get("repository"):
        return str(meta["repository"])
    if item.ecosystem == "engine" and item.name in ENGINE_REPOSITORIES:
        return f"https://github.com/{ENGINE_REPOSITORIES[item.name]}"
    return None


def gather(
    folder: Path,
    plan: Doc,
    metadata: Mapping[tuple[str, str], Doc],
    pages: ReleasePages,
    jobs: int,
) -> list[BumpNotes]:
    """Every bump's notes: the kept ones as they are, the others fetched (each repository's
    releases once, each changelog once) and kept when complete."""
    items = bump_list(plan)
    found: dict[str, BumpNotes] = {}
    todo: list[BumpItem] = []
    for item in items:
        kept = read_kept(folder, item)
        if kept is not None:
            found[item.label] = kept
        else:
            todo.append(item)
    fresh = [registry_part(item, metadata.get((item.ecosystem, item.name))) for item in todo]
    repos = {n.item.label: github_repo(n.repository) for n in fresh}
    releases = _each(pages.releases, [r for r in repos.values() if r is not None], jobs)
    for notes in fresh:
        _release_part(notes, repos[notes.item.label], releases)
    wanted: dict[str, tuple[Repo, str | None]] = {}
    for notes in fresh:
        repo = repos[notes.item.label]
        if repo is not None and _wants_changelog(notes, repo, releases):
            wanted[notes.item.label] = (repo, _directory(metadata, notes.item))
    logs = _each(lambda key: pages.changelog(*key), wanted.values(), jobs)
    for notes in fresh:
        if notes.item.label in wanted:
            _changelog_part(notes, logs[wanted[notes.item.label]])
        if notes.complete:
            keep(folder, notes)
        found[notes.item.label] = notes
    return [found[item.label] for item in items]


def _directory(metadata: Mapping[tuple[str, str], Doc], item: BumpItem) -> str | None:
    directory = (metadata.get((item.ecosystem, item.name)) or {}).get("directory")
    return str(directory) if directory else None


def registry_part(item: BumpItem, meta: Doc | None) -> BumpNotes:
    """A bump's notes as far as the registry metadata kept at plan time goes: its versions
    in the range and the repository whose release pages hold the rest."""
    notes = BumpNotes(item, notes_file(item), shown_repository(_repository_of(item, meta)))
    if meta is None:
        notes.unavailable.append(NO_REGISTRY_METADATA)
    else:
        releases = meta.get("releases")
        for release in releases if isinstance(releases, list) else []:
            if not isinstance(release, dict):
                continue
            version = str(release.get("version", ""))
            if in_range(version, item.from_version, item.to_version, item.ecosystem):
                notes.registry.append(
                    {
                        "version": version,
                        "published": release.get("published"),
                        "deprecated": str(release.get("note") or "")
                        if release.get("withdrawn")
                        else None,
                    }
                )
    raw = _repository_of(item, meta)
    if raw is None:
        notes.unavailable.append(NO_REPOSITORY_NAMED)
    elif github_repo(raw) is None:
        notes.unavailable.append(not_on_github(notes.repository))
    return notes


def _release_part(notes: BumpNotes, repo: Repo | None, answers: Mapping[Repo, _Outcome]) -> None:
    if repo is None:
        return
    outcome = answers[repo]
    if outcome.problem:
        notes.complete = notes.complete and not outcome.transient
        notes.unavailable.append(pages_unread(repo.slug, outcome.transient, outcome.problem))
    elif outcome.value is None:
        notes.unavailable.append(no_repository_on_github(repo.slug))
    else:
        notes.releases = releases_in_range(outcome.value, notes.item, notes.item.from_version)


def _wants_changelog(notes: BumpNotes, repo: Repo | None, answers: Mapping[Repo, _Outcome]) -> bool:
    """A changelog is read only where the repository answered without a release in range."""
    if repo is None or notes.releases:
        return False
    outcome = answers[repo]
    return not outcome.problem and outcome.value is not None


def _changelog_part(notes: BumpNotes, outcome: _Outcome) -> None:
    span = (notes.item.from_version, notes.item.to_version)
    if outcome.problem:
        notes.complete = notes.complete and not outcome.transient
        notes.unavailable.append(changelog_unread(outcome.problem))
        return
    if outcome.value is None:
        notes.unavailable.append(no_release_notes(*span))
        return
    path, text = outcome.value
    notes.changelog_file = path
    try:
        sections = changelog_sections(text, notes.item.ecosystem)
    except Unreadable as error:
        notes.unavailable.append(changelog_unreadable(path, error))
        return
    notes.changelog = _ascending(
        [
            s
            for s in sections
            if in_range(
                s["version"], notes.item.from_version, notes.item.to_version, notes.item.ecosystem
            )
        ],
        notes.item.ecosystem,
    )
    if not notes.changelog:
        notes.unavailable.append(changelog_without_entry(path, *span))


def notes_document(
    level: str, folder: Path, found: Sequence[BumpNotes], warnings: Sequence[str]
) -> Doc:
    """What ``deps notes`` prints: titles, versions and links; the bodies stay in the files."""
    return {
        "level": level,
        "plan_dir": str(folder),
        "notes_dir": str(folder / NOTES_DIR),
        "packages": [n.to_json() for n in found],
        "counts": {
            "packages": len(found),
            "with_notes": sum(1 for n in found if n.releases or n.changelog),
            "unavailable": sum(1 for n in found if n.unavailable),
            "from_cache": sum(1 for n in found if n.source == "cache"),
            "fetched": sum(1 for n in found if n.source == "fetched"),
            "not_kept": sum(1 for n in found if not n.kept),
        },
        "warnings": list(warnings),
    }
