"""The installed release (B): its manifest, per-file records and pristine bytes.

Bytes come from the pristine cache; when the cache is gone (a fresh clone: it is
git-ignored) the release is fetched again from the recorded source, once.
"""

from __future__ import annotations

import json

from tether.errors import TetherError
from tether.flows.project import (
    Project,
    Release,
    absolute_source,
    recorded_source,
    source_location,
)
from tether.fsio import read_bytes, sha256_bytes
from tether.model.manifest import Manifest, parse_manifest
from tether.parselimits import MAX_NESTING, json_loads
from tether.state.store import FileRecord, State
from tether.valueclass import field, valueclass
from tether.versions import same_release

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which status and check pay
if TYPE_CHECKING:
    from tether.flows.notes import Note


class BaselineUnavailable(TetherError):
    """The installed release cannot be fetched, so there is nothing to merge against."""

    def __init__(self, message: str, version: str, source: str) -> None:
        super().__init__(message)
        self.version = version
        self.source = source


@valueclass()
class Baseline:
    """What the project was installed from: the release, its files and their bytes."""

    project: Project
    version: str
    source: str
    upstream: str
    files: dict[str, FileRecord]
    sentinels: set[str]
    state: State | None
    _manifest: Manifest | None = None
    _release: Release | None = field(default=None, repr=False)
    _manifest_recorded: bool = field(default=False, repr=False, compare=False)
    # What a person should know about where this baseline came from (flows/notes.py).
    notes: list[Note] = field(default_factory=list)
    # The source as the state records it (``source`` is where it is): a relative local path
    # stays relative to the project (``flows.project.recorded_source``).
    recorded_source: str = ""

    @property
    def source_to_record(self) -> str:
        return self.recorded_source or self.source

    def release(self) -> Release:
        if self._release is None:
            if not self.source:
                raise TetherError(
                    f"{self.project.root}: the installed release {self.version} is not cached and "
                    "no source is recorded; pass --source"
                )
            # Fetched only when a file's bytes are not in the pristine cache: status and check
            # on a clean project import neither the release sources nor the template renders.
            from tether.flows.fetch import fetch_release

            self._release = fetch_release(self.project, self.source, self.version, self.exclude())
        return self._release

    def exclude(self) -> tuple[str, ...]:
        """The adopter's ``--exclude`` patterns, recorded in the installed manifest of a
        release that shipped none: every release of the project is read with them."""
        from tether.model.implicit import recorded_exclude

        if self._manifest is not None:
            return recorded_exclude(self._manifest.extra)
        recorded = self._recorded_manifest_bytes()
        if recorded is None:
            return ()
        try:
            return recorded_exclude(json_loads(recorded, max_depth=MAX_NESTING))
        except (json.JSONDecodeError, UnicodeDecodeError):
            return ()

    def manifest(self) -> Manifest:
        if self._manifest is None:
            recorded = self.recorded_manifest()
            self._manifest = recorded if recorded is not None else self.release().manifest
        return self._manifest

    def recorded_digest(self) -> str | None:
        """The digest the state records for the manifest ``manifest()`` stands for; None when
        that is a release's own (the baseline was rebuilt from a version marker) or no state
        is at hand."""
        if self.state is None or (self._manifest is not None and not self._manifest_recorded):
            return None
        return self.state.manifest_sha256

    def recorded_manifest(self) -> Manifest | None:
        """The installed manifest parsed from the bytes with ``recorded_digest()`` (the
        pristine copy or the project's own, checked against it), without fetching the
        release; None when they are not at hand or are not this baseline's manifest."""
        if self._manifest_recorded or self.recorded_digest() is None:
            return self._manifest if self._manifest_recorded else None
        recorded = self._recorded_manifest_bytes()
        if recorded is None:
            return None
        origin = f"{self.project.profile.manifest_path} of release {self.version}"
        try:
            data = json_loads(recorded, max_depth=MAX_NESTING)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
        profile = self.project.profile
        self._manifest = parse_manifest(
            data, origin, profile.manifest_format, profile.reserved_paths()
        )
        self._manifest_recorded = True
        return self._manifest

    def _recorded_manifest_bytes(self) -> bytes | None:
        """B's manifest without fetching: the pristine copy, else the project's own copy while
        it still has the recorded digest (a fresh clone has no cache, it is git-ignored)."""
        if self.state is None:
            return None
        cached = self.project.pristine.get(self.state.manifest_sha256)
        copy = self.project.profile.manifest_copy
        if cached is not None or copy is None:
            return cached
        try:
            data = read_bytes(self.project.path(copy))
        except OSError:
            return None
        return data if sha256_bytes(data) == self.state.manifest_sha256 else None

    def read(self, rel: str) -> bytes | None:
        """B's bytes for a path, None when B did not ship it, or, from a source that holds
        only its current version (a recipe folder), when they are known by hash only (see
        ``known``)."""
        record = self.files.get(rel)
        if record is None:
            return None
        data = self.project.pristine.get(record.sha256)
        if data is None:
            if self.project.profile.source_is_tree:
                return self._from_tree(rel, record.sha256)
            data = self.release().read(rel)
            if data is None or sha256_bytes(data) != record.sha256:
                raise TetherError(
                    f"{rel}: the pristine copy of release {self.version} is missing and the source "
                    "no longer provides the same bytes"
                )
            try:  # noqa: SIM105  (contextlib costs a status ~0.7 ms to import)
                self.project.pristine.put(data)
            except OSError:  # a read-only cache only costs a later fetch
                pass
        return data

    def known(self, rel: str) -> bool:
        """Whether B's bytes for a recorded path can be had. A host gbrain installed
        without tether has its record as the baseline: hashes of what gbrain copied, whose
        bytes the recipe folder (it has only its current version) may no longer hold."""
        return rel not in self.files or self.read(rel) is not None

    def _from_tree(self, rel: str, digest: str) -> bytes | None:
        """The bytes from a recipe folder, when it still has the recorded ones."""
        try:
            data = self.release().read(rel)
        except TetherError:
            return None
        if data is None or sha256_bytes(data) != digest:
            return None
        try:  # noqa: SIM105  (contextlib costs a status ~0.7 ms to import)
            self.project.pristine.put(data)
        except OSError:
            pass
        return data


def load_baseline(project: Project, source_override: str | None = None) -> Baseline:
    """The installed release. Where the ecosystem keeps a version marker in the project
    (GAIA's ``.gaia/VERSION``, committed), the marker says which release is installed:
    tether's own record is git-ignored, so after a branch switch, a pull or a hand edit it
    can name a release whose files are not the ones in the tree."""
    if project.template is not None:
        # The template record is the marker; the baseline is its render (always: cached).
        from tether.flows.template_project import baseline_release

        release = baseline_release(project)
        baseline = _baseline_of_release(project, release, project.load_state())
        baseline.notes += release.notes  # how it was rendered (a hook not run)
        return baseline
    recorded = recorded_source(project.root, source_override) if source_override else ""
    if source_override:
        # Opened from wherever this run is; recorded relative to the project when it was
        # given relative (``recorded``), so a clone elsewhere still finds it.
        source_override = absolute_source(source_override)
    state = project.load_state()
    marker = project.read_version_marker()
    if state is not None:
        source = source_override or source_location(project.root, state.source)
        recorded = recorded or state.source
        if project.profile.version_file is not None and marker is None:
            raise TetherError(
                f"{project.path(project.profile.version_file)}: missing, so the installed "
                f"release is unknown (tether's record says {state.version}); restore it "
                f"(git checkout -- {project.profile.version_file}) or write the installed "
                "version into it"
            )
        if marker is not None and not same_release(marker, state.version):
            baseline = _baseline_from_marker(project, state, marker, source)
            baseline.recorded_source = recorded
            return baseline
        return Baseline(
            project,
            state.version,
            source,
            state.upstream,
            dict(state.files),
            set(state.sentinels),
            state,
            recorded_source=recorded,
        )
    if marker is None:
        raise no_install_error(project)
    default = project.profile.default_source
    if not source_override and default is None:
        raise TetherError(
            f"{project.path(project.profile.version_file or '')}: release {marker} was not "
            "installed by tether; pass --source so its baseline can be fetched"
        )
    source = source_override or str(default)
    from tether.flows.fetch import fetch_release

    try:
        release = fetch_release(project, source, marker)
    except TetherError as error:
        if source_override:
            raise BaselineUnavailable(str(error), marker, source) from None
        raise BaselineUnavailable(
            f"{project.path(project.profile.version_file or '')}: release {marker} was not "
            f"installed by tether and fetching it from {default} failed ({error}); pass --source",
            marker,
            source,
        ) from None
    baseline = _baseline_of_release(project, release, None)
    baseline.recorded_source = recorded
    return baseline


def no_install_error(project: Project) -> TetherError:
    """Neither tether's record nor the ecosystem's version marker: in the profile's words
    (GAIA Step 1) when it has them."""
    hint = project.profile.missing_marker_hint
    if hint is not None and project.profile.version_file is not None:
        return TetherError(f"{project.path(project.profile.version_file)}: not found: {hint}")
    return TetherError(f"{project.root}: no installed release recorded; run 'tether init' first")


def require_an_install(project: Project) -> None:
    """Refuse before anything is written (the lock included) when nothing says which release
    is installed: no record and no version marker."""
    if project.template is not None or project.profile.version_file is None:
        return  # a generated project, or one whose record alone says it (checked later)
    if not project.state_path.is_file() and project.read_version_marker() is None:
        raise no_install_error(project)


def _baseline_of_release(project: Project, release: Release, state: State | None) -> Baseline:
    files = {
        rel: FileRecord(release.manifest.files[rel], release.digest(rel))
        for rel in release.manifest.managed_paths()
    }
    return Baseline(
        project,
        release.version,
        release.source,
        release.manifest.name,
        files,
        set(release.manifest.sentinels),
        state,
        release.manifest,
        release,
    )


def _baseline_from_marker(project: Project, state: State, marker: str, source: str) -> Baseline:
    """Rebuild the baseline from the release the marker names, fetching it if needed."""
    from tether.flows.fetch import fetch_release

    marker_file = project.profile.version_file
    assert marker_file is not None  # a marker is read from the profile's version file only
    try:
        release = fetch_release(project, source, marker)
    except TetherError as error:
        raise BaselineUnavailable(
            f"{marker_file} says {marker} but tether's record says {state.version}, and "
            f"release {marker} cannot be fetched from {source} ({error}); restore the marker "
            f"(git checkout -- {marker_file}) or pass --source",
            marker,
            source,
        ) from None
    from tether.flows.notes import MarkerWins

    baseline = _baseline_of_release(project, release, state)
    baseline.notes.append(MarkerWins(marker_file, marker, state.version))
    return baseline


def compare_by_hand(
    project: Project, error: BaselineUnavailable, wanted: str | None
) -> TetherError:
    """The refusal when the installed release cannot be fetched (GAIA Step 5): a three-way
    merge needs it, so the update stops; when the release it would install can be fetched,
    the refusal says where that tree is, to compare the project with it by hand."""
    from tether.flows.fetch import fetch_release
    from tether.sources import open_source

    try:
        target = wanted
        if not target:
            versions = open_source(error.source, project.releases_cache).available_versions()
            if not versions:
                return error
            target = versions[-1]
        if same_release(target, error.version):
            return error
        tree = fetch_release(project, error.source, target).root
    except TetherError:
        return error
    try:
        shown = tree.relative_to(project.root).as_posix()
    except ValueError:
        shown = str(tree)
    return TetherError(
        f"{error}; without release {error.version} nothing can be merged three ways: "
        f"compare the project by hand with release {target}, fetched to {shown} "
        f"(e.g. diff -ru {shown} .), and carry over what you want"
    )
