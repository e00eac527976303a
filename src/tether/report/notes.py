"""The words of the notes a flow attaches as facts (``flows/notes.py``) and of what a
release source said (``model/source_notes.py``), one wording per kind for every report that
shows it (status, check, update, diff, init) and its JSON document."""

from __future__ import annotations

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which status and check pay
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Never, NoReturn

    from tether.flows.notes import Fact, NoLongerRegular, Note, NotRead
    from tether.model.source_notes import SourceNote


def worded_notes(notes: Sequence[Note]) -> list[str]:
    """Every note in its words, in the order the flow found them."""
    return [note_words(note) for note in notes]


def note_words(note: Fact) -> str:
    # Put off to the first fact: a clean status has none, and loads no fact's type.
    from tether.flows.notes import (
        GbrainRecordAdopted,
        HooksNotRun,
        MarkerWins,
        MigrationInterrupted,
        NoLongerRegular,
        NotRead,
        PatternUndecided,
        ProgramsOff,
        ReleasePageShown,
        TemplateProgramsNotRun,
        UpstreamSwitched,
    )
    from tether.model.source_notes import SourceNote

    match note:
        case MarkerWins():
            return (
                f"{note.marker_file} says {note.marker} but tether's record says "
                f"{note.recorded}: the marker wins, so release {note.marker} is the installed "
                "baseline for this run"
            )
        case NotRead() | NoLongerRegular():
            return f"{note.path}: {unread_words(note)}"
        case UpstreamSwitched():
            return (
                f"switched upstream from {note.installed} to {note.named} (--switch-upstream): "
                f"{note.source} is recorded as the source"
            )
        case ReleasePageShown():
            return (
                f"the changelog of release {note.version} has no section after "
                f"{note.installed}: the release notes shown are the ones published with the "
                "release"
            )
        case HooksNotRun():
            why = {
                ProgramsOff.NO_PROGRAMS: "--no-programs",
                ProgramsOff.DRY_RUN: "a dry run runs no template program",
                ProgramsOff.UNTRUSTED: "pass --trust to run them",
            }[note.why]
            return (
                f"template {note.template} at {note.at} rendered without its hooks ({why}): "
                f"{', '.join(note.hooks)} not run, so files they would write or remove may "
                "differ"
            )
        case TemplateProgramsNotRun():
            programs = " and ".join(note.programs)
            what = (
                f"the {programs} of template {note.template} ({note.from_commit} to "
                f"{note.to_version})"
            )
            if note.why is ProgramsOff.NO_PROGRAMS:
                return (
                    f"not run (--no-programs): {what}; the answers file is recorded without "
                    "them, as after 'copier update --skip-tasks'"
                )
            consent = "; the update needs --trust for them" if note.needs_trust else ""
            return f"not run in a dry run: {what}{consent}"
        case MigrationInterrupted():
            return f"migration {note.migration} was interrupted while it ran; it runs again"
        case PatternUndecided():
            return (
                f"{note.name}: its pattern could not be matched within {note.seconds:g} s "
                f"({note.condition.describe()}); the condition is taken as not holding"
            )
        case GbrainRecordAdopted():
            return (
                f"adopted gbrain's record of the install ({note.record}, version {note.version}): "
                f"{note.files} file(s) as gbrain copied them; nothing was copied, run tether "
                "refresh"
            )
        case SourceNote():
            return source_said(note)
        case _:
            _unworded(note)


def source_said(note: SourceNote) -> str:
    """What a release source said while it listed or fetched (``Source.notes``)."""
    from tether.model.source_notes import SourceSaid

    match note.code:
        case SourceSaid.TWIN_NAMES:
            return (
                f"{note.spec}: both {note.name} and {note.other} name version {note.version}; "
                f"{note.name} was used (a name without a leading v wins)"
            )
        case SourceSaid.TAG_NOT_A_COMMIT:
            return (
                f"{note.spec}: tag {note.name} names a {note.kind}, not a commit, so it is no "
                "release; skipped"
            )
        case SourceSaid.LISTED_THROUGH_API:
            return (
                f"gh: {note.detail}; the releases of {note.spec} were listed through GitHub's API"
            )
        case SourceSaid.DOWNLOADED_THROUGH_API:
            return f"gh: {note.detail}; {note.name} was downloaded through GitHub's API"


def unread_words(note: NotRead | NoLongerRegular) -> str:
    """Why a file was not read, without its path (a diff's per-file note)."""
    from tether.flows.notes import NotRead

    return f"{note.problem}; not read" if isinstance(note, NotRead) else "no longer a regular file"


def _unworded(note: Never) -> NoReturn:
    """``typing.assert_never`` without importing typing: the type checker proves every kind
    of note has its words above (``note`` is ``Never`` here)."""
    raise AssertionError(f"no words for {note!r}")
