"""Profiles map tether's on-disk names and formats onto an ecosystem, as data.

A profile never adds code paths: flows read these fields and act the same way
for every profile.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tether.errors import UsageError
from tether.model.lifecycle import Lifecycle
from tether.model.manifest import ManifestFormat
from tether.pathrules import ReservedPaths
from tether.profiles.gaia import (
    AFTER_REGENERATION,
    ARTIFACT_NAMES,
    DEFAULT_SOURCE,
    MISSING_MARKER_HINT,
    NO_REGIONS_VARIABLE,
    QUALITY_GATE,
    REGION_CHECK,
    REGION_INPUTS,
    UPDATE_CHECK_CACHE,
    UPDATE_PING,
    WORKTREE_CACHE_UNAVAILABLE,
    gaia_lifecycle,
)
from tether.valueclass import field, valueclass

# tether's own folder in every project, whatever the profile: no release writes there.
TETHER_DIR = ".tether"


@valueclass(frozen=True)
class Profile:
    """An ecosystem's names, formats and steps, as data."""

    name: str
    manifest_path: str  # inside a release tree, and where the project keeps its copy
    manifest_format: ManifestFormat
    state_file: str  # tether's own record of the install
    cache_dir: str  # fetched releases and pristine copies (git-ignored)
    backup_root: str  # <backup_root>/<run-id>/<path>
    merge_dir: str  # conflict patches and notes
    lock_file: str
    journal_file: str
    log_dir: str  # output of programs tether runs (region regeneration)
    version_file: str | None = None  # the ecosystem's own installed-version marker
    sentinels: tuple[str, ...] = ()
    field_merges: dict[str, str] = field(default_factory=dict)  # path -> preset name
    # Files with a field-merge rule are merged key by key whenever upstream changed them,
    # even a copy equal to the installed release (GAIA Steps 7a-7c: a mixed file is never
    # replaced whole, so a key upstream removed stays and one it added is only suggested).
    always_merge_fields: bool = False
    default_conflict_style: str = "markers"
    # Lines that keep tether's runtime folders out of git; written by tether itself.
    ignore_file: str = ".tether/.gitignore"
    ignore_rules: tuple[str, ...] = ()
    # Where the project keeps its copy of the installed manifest (None: nowhere).
    manifest_copy: str | None = None
    # The source is one release tree (a recipe folder), not a shelf of versions.
    source_is_tree: bool = False
    # The ecosystem's own record of what was copied (gbrain's .gbrain-source.json).
    source_record: str | None = None
    # The ecosystem tool's own run lock, held beside tether's so neither tool runs while the
    # other does, and its own per-file run log (gbrain's .gbrain-source.refresh.*).
    ecosystem_lock: str | None = None
    ecosystem_log: str | None = None
    # The ecosystem's own release lifecycle (migrations, hand-offs…), as data; joined with
    # what each release declares (docs/lifecycle.md). Built when first asked for (see
    # ``lifecycle``): loading the profiles does not parse it.
    declared_lifecycle: Callable[[], Lifecycle] | None = None
    # The ecosystem's own variable that switches region awareness off for one run.
    no_regions_variable: str | None = None
    # Where releases come from when neither the command nor tether's record names a source.
    default_source: str | None = None
    # Region id -> the files it is derived from, for an ecosystem whose releases do not
    # declare them (docs/regions.md).
    region_inputs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # How the ecosystem names itself and its release tags in a commit message or a pull
    # request title ("chore: update GAIA to v1.7.0"); None: the manifest's upstream name.
    display_name: str | None = None
    tag_prefix: str = ""
    # The page that says how the project checks itself after an update (GAIA's quality
    # gate), pointed at in the next steps when the project has it.
    quality_gate: str | None = None
    # The command that confirms the generated regions are current (GAIA's roster check),
    # named in the next steps when a region was left unregenerated; and what a person must
    # know once a region was rewritten (GAIA: audit gate clearances are invalidated).
    region_check: str | None = None
    after_regeneration: str | None = None
    # Why there is no version marker and what to do, when neither it nor tether's record is
    # there (GAIA's Step 1 words).
    missing_marker_hint: str | None = None
    # The ecosystem's cached update check (GAIA's update-check.json: gaiaCurrent, gaiaLatest,
    # gaiaHasUpdate), quoted from the main checkout when an update is refused in a linked
    # worktree, and what to say when it cannot be read.
    update_check_cache: str | None = None
    update_check_unavailable: str | None = None
    # Path -> the name its conflict artifacts take in the merge folder (default: the path).
    artifact_names: dict[str, str] = field(default_factory=dict)
    # The ecosystem's own program told about each update once its version is recorded
    # (GAIA's ping), best effort: argv, the program a path the release ships, with
    # {from_version} and {to_version} filled in (flows/ping.py).
    update_ping: tuple[str, ...] = ()

    @property
    def lifecycle(self) -> Lifecycle:
        return Lifecycle() if self.declared_lifecycle is None else self.declared_lifecycle()

    def update_title(self, upstream: str, version: str) -> str:
        """The suggested commit message, and the pull request's default title."""
        return update_title(self.display_name or upstream, f"{self.tag_prefix}{version}")

    def reserved_paths(self) -> ReservedPaths:
        """What a release may not ship and a record may not name: derived from the fields
        above, so a new profile reserves its own paths without a second list.

        Reserved: ``.tether/``, the cache, backup, merge and log folders, the folder that
        holds the state, lock and journal (GAIA's ``.gaia/local/tether/``; a file at the
        project's top reserves only itself), and the ecosystem's record of the install.
        Not reserved: the ignore file when it is the project's own (GAIA's ``.gitignore``,
        which releases ship and tether only appends its lines to, when they are missing),
        the manifest copy and the version marker (a release ships those as its records).
        """
        own = (self.state_file, self.lock_file, self.journal_file)
        folders = [TETHER_DIR, self.cache_dir, self.backup_root, self.merge_dir, self.log_dir]
        folders += [path.rpartition("/")[0] for path in own]
        files = [
            *own,
            self.source_record or "",
            self.ecosystem_lock or "",
            self.ecosystem_log or "",
        ]
        return ReservedPaths(
            tuple(dict.fromkeys(f for f in folders if f)), tuple(f for f in files if f)
        )


def update_title(name: str, version: str) -> str:
    """``chore: update <name> to <version>``: one wording for commits and pull requests."""
    return f"chore: update {name} to {version}"


NATIVE = Profile(
    name="native",
    manifest_path=".tether/manifest.json",
    manifest_format=ManifestFormat.NATIVE,
    state_file=".tether/state.json",
    cache_dir=".tether/cache",
    backup_root=".tether/backup",
    merge_dir=".tether/merge",
    lock_file=".tether/lock",
    journal_file=".tether/journal.jsonl",
    log_dir=".tether/logs",
    ignore_file=".tether/.gitignore",
    ignore_rules=("cache/", "backup/", "merge/", "journal.jsonl*", "lock", "logs/", "audit/"),
    manifest_copy=".tether/manifest.json",
)

GAIA = Profile(
    name="gaia",
    manifest_path=".gaia/manifest.json",
    manifest_format=ManifestFormat.GAIA,
    state_file=".gaia/local/tether/state.json",
    cache_dir=".gaia/local/cache/shared/update-gaia",
    backup_root=".gaia-backup",
    merge_dir=".gaia-merge",
    lock_file=".gaia/local/tether/lock",
    journal_file=".gaia/local/tether/journal.jsonl",
    log_dir=".gaia/local/tether/logs",
    version_file=".gaia/VERSION",
    sentinels=(
        "wiki/hot.md",
        "wiki/log.md",
        "CHANGELOG.md",
        ".gaia/VERSION",
        ".gaia/manifest.json",
    ),
    field_merges={
        "package.json": "npm-package",
        "pnpm-workspace.yaml": "pnpm-workspace",
        ".gaia/audit-ci.yml": "gaia-audit-ci",
    },
    always_merge_fields=True,
    default_conflict_style="patch",
    ignore_file=".gitignore",
    ignore_rules=(".gaia-backup/", ".gaia-merge/", ".gaia/local/"),
    manifest_copy=".gaia/manifest.json",
    declared_lifecycle=gaia_lifecycle,
    no_regions_variable=NO_REGIONS_VARIABLE,
    default_source=DEFAULT_SOURCE,
    region_inputs=REGION_INPUTS,
    display_name="GAIA",
    tag_prefix="v",
    quality_gate=QUALITY_GATE,
    region_check=REGION_CHECK,
    after_regeneration=AFTER_REGENERATION,
    missing_marker_hint=MISSING_MARKER_HINT,
    update_check_cache=UPDATE_CHECK_CACHE,
    update_check_unavailable=WORKTREE_CACHE_UNAVAILABLE,
    artifact_names=ARTIFACT_NAMES,
    update_ping=UPDATE_PING,
)

GBRAIN = Profile(
    name="gbrain",
    manifest_path="install/manifest.json",
    manifest_format=ManifestFormat.GBRAIN,
    state_file=".tether/gbrain/state.json",
    cache_dir=".tether/gbrain/cache",
    backup_root=".tether/gbrain/backup",
    merge_dir=".tether/gbrain/merge",
    lock_file=".tether/gbrain/lock",
    journal_file=".tether/gbrain/journal.jsonl",
    log_dir=".tether/gbrain/logs",
    default_conflict_style="patch",
    ignore_file=".tether/.gitignore",
    ignore_rules=("gbrain/*", "!gbrain/state.json"),
    source_is_tree=True,
    source_record=".gbrain-source.json",
    ecosystem_lock=".gbrain-source.refresh.lock",
    ecosystem_log=".gbrain-source.refresh.log",
)

PROFILES: dict[str, Profile] = {p.name: p for p in (NATIVE, GAIA, GBRAIN)}


def _template_profile(name: str) -> Profile:
    """A project generated by copier or cruft (docs/templates.md): its record of the template
    is the committed marker, so tether's own folder is a local cache and journal, ignored by
    git as a whole. Not offered to ``init --profile``: such a project needs no init."""
    return Profile(
        name=name,
        manifest_path=".tether/manifest.json",
        manifest_format=ManifestFormat.NATIVE,
        state_file=".tether/template/state.json",
        cache_dir=".tether/cache",
        backup_root=".tether/backup",
        merge_dir=".tether/merge",
        lock_file=".tether/lock",
        journal_file=".tether/journal.jsonl",
        log_dir=".tether/logs",
        ignore_file=".tether/.gitignore",
        # Everything but the adopter's own settings (state/config.py), which are committed.
        ignore_rules=("*", "!config.toml"),
    )


COPIER_PROFILE = _template_profile("copier")
CRUFT_PROFILE = _template_profile("cruft")
TEMPLATE_PROFILES: dict[str, Profile] = {p.name: p for p in (COPIER_PROFILE, CRUFT_PROFILE)}


def reserved_by_any_profile() -> ReservedPaths:
    """Paths some profile reserves: what a publisher's manifest may never list, since it
    cannot know which profile each adopter uses."""
    reserved = ReservedPaths()
    for profile in PROFILES.values():
        reserved = reserved.union(profile.reserved_paths())
    return reserved


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(PROFILES)
        raise UsageError(f"unknown profile {name!r} (known: {known})") from None


def detect_profile(root: Path, forced: str | None = None) -> Profile | None:
    """The profile a project uses: forced, else by what is on disk, else None."""
    if forced:
        return get_profile(forced)
    if (root / NATIVE.state_file).is_file():
        return NATIVE
    if (root / GBRAIN.state_file).is_file() or (root / (GBRAIN.source_record or "")).is_file():
        return GBRAIN
    if (root / GAIA.version_file).is_file() and (root / GAIA.manifest_path).is_file():  # type: ignore[operator]
        return GAIA
    if (root / GAIA.state_file).is_file() or (root / GAIA.manifest_path).is_file():
        return GAIA  # a missing marker is reported when it is read, in GAIA's words
    return None
