"""Deep mode's deterministic parts, read from a plan document (``deps plan --json``, or the
plan folder's ``cross-project-plan.json`` read back): the deduplicated bump list, its groups,
the PR buckets of a major update and the classification of a subset selection.

Pure functions over plain values: nothing here reads a file or asks a registry.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tether.deps.model import Ecosystem
from tether.deps.targets import dialect_of

Doc = dict[str, Any]
_OPERATOR = re.compile(r"^[\^~=<>!\sv]*")


@dataclass(frozen=True)
class BumpItem:
    """One package (one version line: a named catalog is its own) that moves somewhere."""

    name: str
    ecosystem: str
    catalog: str | None
    current_version: str  # the declared current version most projects share, as written
    target_version: str  # the highest version it moves to, as written
    from_version: str  # the lowest current version, bare: where its release notes start
    to_version: str  # the highest target version, bare: where they end
    projects: tuple[str, ...]  # where it moves, registry order
    locations: tuple[str, ...]
    override: str | None = None  # the override family it belongs to

    @property
    def label(self) -> str:
        return f"{self.name} (catalog {self.catalog})" if self.catalog else self.name

    @property
    def scope(self) -> str | None:
        return (
            self.name.split("/", 1)[0] if self.name.startswith("@") and "/" in self.name else None
        )

    @property
    def breaking(self) -> bool:
        """A new major, or for 0.x a new minor (semver's rule for initial development)."""
        dialect = dialect_of(_ecosystem(self.ecosystem))
        try:
            old, new = dialect.parts(self.from_version), dialect.parts(self.to_version)
        except (ValueError, TypeError, AttributeError):
            return True  # versions it cannot read: assume the worst
        return old[0] != new[0] or (old[0] == 0 and old[1] != new[1])

    def to_json(self) -> Doc:
        out: Doc = {"name": self.name, "ecosystem": self.ecosystem}
        if self.catalog:
            out["catalog"] = self.catalog
        out.update(
            current_version=self.current_version,
            target_version=self.target_version,
            from_version=self.from_version,
            to_version=self.to_version,
            breaking=self.breaking,
            projects=list(self.projects),
            locations=list(self.locations),
            override=self.override,
        )
        return out


def _ecosystem(value: str) -> Ecosystem:
    return "pypi" if value == "pypi" else "npm" if value == "npm" else "engine"


def bare_version(shown: str, ecosystem: str) -> str:
    """``^1.2.3`` → ``1.2.3``; a partial semver (an engine pin ``20``) gets its zeros."""
    version = _OPERATOR.sub("", shown).strip()
    if ecosystem != "pypi":
        core, dash, rest = version.partition("-")
        parts = core.split(".")
        if all(p.isdigit() for p in parts) and len(parts) < 3:
            version = ".".join(parts + ["0"] * (3 - len(parts))) + dash + rest
    return version


def _moving(package: Doc) -> list[Doc]:
    if package.get("skipped_by"):
        return []
    return [o for o in package["occurrences"] if o["effective_target"] != o["current_version"]]


def most_common(values: Iterable[str]) -> str:
    """The most frequent value; among equals the first seen (registry order)."""
    counts = Counter(values)
    return max(counts, key=lambda value: counts[value])


def _extreme(versions: Sequence[str], ecosystem: str, highest: bool) -> str:
    best = versions[0]
    for version in versions[1:]:
        order = compare(version, best, ecosystem)
        if (order > 0) if highest else (order < 0):
            best = version
    return best


def compare(left: str, right: str, ecosystem: str) -> int:
    """The ecosystem's order; versions it cannot read compare equal (never a crash on a
    plan file edited by hand)."""
    try:
        return dialect_of(_ecosystem(ecosystem)).compare(left, right)
    except (ValueError, TypeError, AttributeError):
        return 0


def override_families(plan: Doc) -> dict[str, str]:
    """Package label → the override entry that took it."""
    return {
        label: str(entry["id"])
        for entry in plan.get("overrides") or []
        for label in entry["packages"]
    }


def bump_list(plan: Doc) -> list[BumpItem]:
    """Every package that moves, once, alphabetical (then by catalog)."""
    families = override_families(plan)
    items = []
    for package in plan["packages"]:
        moving = _moving(package)
        if not moving:
            continue
        ecosystem = str(package["ecosystem"])
        currents = [bare_version(o["current_version"], ecosystem) for o in moving]
        targets = [bare_version(o["effective_target"], ecosystem) for o in moving]
        highest = _extreme(targets, ecosystem, highest=True)
        shown_target = next(
            o["effective_target"] for o, t in zip(moving, targets, strict=True) if t == highest
        )
        item = BumpItem(
            name=str(package["name"]),
            ecosystem=ecosystem,
            catalog=package.get("catalog"),
            current_version=most_common(o["current_version"] for o in moving),
            target_version=shown_target,
            from_version=_extreme(currents, ecosystem, highest=False),
            to_version=highest,
            projects=tuple(dict.fromkeys(o["project_name"] for o in moving)),
            locations=tuple(dict.fromkeys(o["location"] for o in moving)),
        )
        items.append(_with_family(item, families))
    return sorted(items, key=lambda b: (b.name, b.catalog or ""))


def _with_family(item: BumpItem, families: Mapping[str, str]) -> BumpItem:
    family = families.get(item.label)
    if family is None:
        return item
    return BumpItem(**{**item.__dict__, "override": family})


# --- groups -------------------------------------------------------------------------------

GROUP_KINDS = ("override-family", "scope", "package")


@dataclass(frozen=True)
class Group:
    id: str  # override:<id> | scope:@scope | package:<name>
    kind: str
    packages: tuple[str, ...]  # labels, alphabetical

    def to_json(self) -> Doc:
        return {"id": self.id, "kind": self.kind, "packages": list(self.packages)}


def group_of(item: BumpItem) -> tuple[str, str]:
    """An override family holds its packages first; then a scope (``@babel/…``); a package
    that is neither is a group of its own."""
    if item.override:
        return f"override:{item.override}", "override-family"
    if item.scope:
        return f"scope:{item.scope}", "scope"
    return f"package:{item.name}", "package"


def groups(items: Sequence[BumpItem]) -> list[Group]:
    members: dict[tuple[str, str], list[str]] = {}
    for item in items:
        members.setdefault(group_of(item), []).append(item.label)
    made = [Group(key, kind, tuple(sorted(labels))) for (key, kind), labels in members.items()]
    return sorted(made, key=lambda g: (GROUP_KINDS.index(g.kind), g.id))


# --- PR buckets ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Together:
    """Why two bumps share a bucket: ``package`` at ``version`` names ``peer`` as a peer,
    or both are of the override family ``family``. Worded by
    ``report/dossier.together_reason``."""

    kind: Literal["peer", "override"]
    package: str = ""
    version: str = ""
    peer: str = ""
    family: str = ""


@dataclass(frozen=True)
class Bucket:
    id: str  # pr-1, pr-2, … in the order to open them
    breaking: bool
    packages: tuple[str, ...]  # labels, alphabetical
    projects: tuple[str, ...]
    together: tuple[Together, ...] = ()  # why packages share this bucket

    def to_json(self, reason: Callable[[Together], str]) -> Doc:
        """Its document, each ``together`` in the words ``reason`` gives."""
        return {
            "id": self.id,
            "breaking": self.breaking,
            "packages": list(self.packages),
            "projects": list(self.projects),
            "together": [reason(why) for why in self.together],
        }


@dataclass
class _Components:
    parent: dict[str, str] = field(default_factory=dict)
    reasons: list[tuple[str, str, Together]] = field(default_factory=list)  # (a, b, why)

    def find(self, label: str) -> str:
        root = self.parent.setdefault(label, label)
        if root != label:
            root = self.parent[label] = self.find(root)
        return root

    def join(self, a: str, b: str, why: Together) -> None:
        self.reasons.append((a, b, why))
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def pr_buckets(
    items: Sequence[BumpItem], peers: Mapping[tuple[str, str], Sequence[str]]
) -> list[Bucket]:
    """Partition a major update into pull requests.

    Packages of one override family share a bucket, and so do a package and the bumped
    packages its target version names as peers (``peers``: (ecosystem, name) → peer names).
    Every group without a breaking change goes into one first bucket; each group with one
    gets its own, alphabetical by its first package.
    """
    components = _Components()
    by_name: dict[tuple[str, str], list[str]] = {}
    for item in items:
        components.find(item.label)
        by_name.setdefault((item.ecosystem, item.name), []).append(item.label)
    _join_families(items, components)
    for item in items:
        for peer in peers.get((item.ecosystem, item.name), ()):
            for label in by_name.get((item.ecosystem, peer), ()):
                if label != item.label:
                    why = Together("peer", item.name, item.to_version, peer=peer)
                    components.join(item.label, label, why)
    return _buckets(items, components)


def _join_families(items: Sequence[BumpItem], components: _Components) -> None:
    first: dict[str, str] = {}
    for item in items:
        if item.override is None:
            continue
        head = first.setdefault(item.override, item.label)
        if head != item.label:
            components.join(head, item.label, Together("override", family=item.override))


def _buckets(items: Sequence[BumpItem], components: _Components) -> list[Bucket]:
    members: dict[str, list[BumpItem]] = {}
    for item in items:
        members.setdefault(components.find(item.label), []).append(item)
    safe = [i for group in members.values() if not any(m.breaking for m in group) for i in group]
    risky = [g for g in members.values() if any(m.breaking for m in g)]
    ordered = ([safe] if safe else []) + sorted(risky, key=lambda g: min(m.label for m in g))
    made = []
    for index, group in enumerate(ordered, 1):
        labels = {m.label for m in group}
        made.append(
            Bucket(
                f"pr-{index}",
                any(m.breaking for m in group),
                tuple(sorted(labels)),
                tuple(dict.fromkeys(p for m in group for p in m.projects)),
                tuple(dict.fromkeys(w for a, b, w in components.reasons if {a, b} <= labels)),
            )
        )
    return made


def bucket_counts(buckets: Sequence[Bucket]) -> dict[str, int]:
    """How the partition came out: buckets by kind, and how many held packages together."""
    return {
        "buckets": len(buckets),
        "breaking": sum(1 for b in buckets if b.breaking),
        "non_breaking": sum(1 for b in buckets if not b.breaking),
        "kept_together_by_override": sum(
            1 for b in buckets if any(w.kind == "override" for w in b.together)
        ),
        "kept_together_by_peers": sum(
            1 for b in buckets if any(w.kind == "peer" for w in b.together)
        ),
    }


# --- subset selection ---------------------------------------------------------------------


@dataclass(frozen=True)
class Selection:
    """What a pick-subset answer or ``--select`` asks to apply."""

    bumps: tuple[str, ...]  # package names, exactly as the plan spells them
    improvements: tuple[str, ...]  # improvement titles some token is part of
    unmatched: tuple[str, ...]


def classify(tokens: Sequence[str], bump_names: Sequence[str], titles: Sequence[str]) -> Selection:
    """A token picks the bump it names exactly (case matters: npm names are case-sensitive)
    and every improvement whose title contains it, in any case; a token matching neither is
    unmatched. One token may do both (``react`` names a bump and is part of a title)."""
    names = set(bump_names)
    bumps: list[str] = []
    improvements: set[str] = set()
    unmatched: list[str] = []
    for token in tokens:
        found = [t for t in titles if token.lower() in t.lower()]
        improvements.update(found)
        if token in names and token not in bumps:
            bumps.append(token)
        elif not found and token not in names:
            unmatched.append(token)
    return Selection(tuple(bumps), tuple(t for t in titles if t in improvements), tuple(unmatched))
