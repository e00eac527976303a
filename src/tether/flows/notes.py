"""What a flow finds that a person should know, as facts: a note travels in a release's, a
baseline's, a lifecycle plan's or a report's ``notes`` into every report that shows it
(status, check, update, diff, init), and ``report/notes.py`` words it there, once for all of
them, with what a release source said (``Source.notes``, facts of
``model/source_notes.py``).

Imported only where a note is made or worded: a clean ``status`` makes none."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, TypeAlias

from tether.model.source_notes import SourceNote

if TYPE_CHECKING:
    from tether.model.lifecycle_declarations import Condition


@dataclass(frozen=True)
class MarkerWins:
    """The project's committed version marker (GAIA's ``.gaia/VERSION``) names another release
    than tether's record: the marker wins, so its release is this run's baseline."""

    marker_file: str  # relative to the project
    marker: str  # the version the marker names
    recorded: str  # the version tether's record names


@dataclass(frozen=True)
class NotRead:
    """A managed path ``status`` does not read: no regular file, or a link."""

    path: str
    problem: str  # what the path is instead (the write guard's words, as in its refusals)


@dataclass(frozen=True)
class NoLongerRegular:
    """A managed path ``diff`` could not read as a regular file although it is neither a
    link nor a FIFO, socket or device (a folder now, or gone since it was looked at)."""

    path: str


@dataclass(frozen=True)
class UpstreamSwitched:
    """``--switch-upstream``: the project moved to a release of another upstream."""

    installed: str  # the upstream the project had installed
    named: str  # the upstream the new release names
    source: str  # the source now recorded


@dataclass(frozen=True)
class ReleasePageShown:
    """The release's changelog has no section after the installed version: the release
    notes shown are the ones published with the release (its release page)."""

    version: str  # the release being installed
    installed: str


class ProgramsOff(StrEnum):
    """Why a template's programs (hooks, migrations, tasks) are not run."""

    NO_PROGRAMS = "no-programs"  # --no-programs
    DRY_RUN = "dry-run"  # a dry run runs none
    UNTRUSTED = "untrusted"  # hooks of a template not trusted (--trust runs them)


@dataclass(frozen=True)
class HooksNotRun:
    """A template rendered without the hooks it ships."""

    template: str  # where the template is (its record's source)
    at: str  # the version or commit rendered
    hooks: tuple[str, ...]
    why: ProgramsOff


@dataclass(frozen=True)
class TemplateProgramsNotRun:
    """A copier update that leaves the template's migrations or tasks unrun."""

    template: str
    programs: tuple[str, ...]  # "migrations", "tasks"
    from_commit: str
    to_version: str
    why: ProgramsOff  # NO_PROGRAMS or DRY_RUN
    needs_trust: bool = False  # a dry run: the update itself will need --trust for them


@dataclass(frozen=True)
class MigrationInterrupted:
    """A resumed update's migration that an interrupted run started and did not finish: it
    runs again."""

    migration: str  # its id


@dataclass(frozen=True)
class PatternUndecided:
    """A lifecycle condition whose pattern the bound stopped before it matched or not: the
    condition is taken as not holding."""

    name: str  # the condition's name in the plan (``ownership[0]``, ``notice:ID``)
    seconds: float  # the bound
    condition: Condition


@dataclass(frozen=True)
class GbrainRecordAdopted:
    """``init`` of a gbrain recipe found gbrain's own record of an install and adopted it:
    nothing was copied, and ``refresh`` brings the files in line."""

    record: str  # gbrain's record, relative to the host
    version: str
    files: int  # the files it records


Fact: TypeAlias = (
    MarkerWins
    | NotRead
    | NoLongerRegular
    | UpstreamSwitched
    | ReleasePageShown
    | HooksNotRun
    | TemplateProgramsNotRun
    | MigrationInterrupted
    | PatternUndecided
    | GbrainRecordAdopted
    | SourceNote
)
Note: TypeAlias = Fact
