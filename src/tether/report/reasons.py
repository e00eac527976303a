"""Why each row of a plan is what it is, in words: the facts a flow put on a row
(``FileAction.why``, ``model.plan.RowWhy``) worded here; every other row carries its own
``reason`` (the decision table's row, a code, a failure's message, a merge's note). And
why a region's program did not run or start (``RegenOutcome.why``), and the sides a
field-aware merge could not read (``model.plan.SideProblem``)."""

from __future__ import annotations

from tether.model.plan import MergeNoteCode, RowCode, SideFault

TYPE_CHECKING = False  # typing itself costs ~2 ms of start-up, which an update pays

if TYPE_CHECKING:
    from typing import Any

    from tether.flows.regen import NotRestored, NotRunWhy, RegenOutcome
    from tether.model.plan import FileAction, MergeNote, RowWhy, SideProblem

_SIDE_WORDS = {"ours": "your side", "theirs": "the release's side"}


def _side_words(side: str) -> str:
    """A side's words; a side this version does not know (a hand-edited journal) as it is
    written, never a traceback on resume."""
    return _SIDE_WORDS.get(side, side)


# A mixed file with no installed copy (``RowCode.NO_BASELINE``), in its row and its
# field-merge summary row.
NO_BASELINE = "no installed copy to merge key by key against"


def row_reason(action: FileAction) -> str:
    """The words of ``action``'s reason, as the text report and the JSON rows give them."""
    return action.reason if action.why is None else worded(action.why)


def side_problems(unread: tuple[SideProblem, ...]) -> str:
    """The sides a field-aware merge could not read, in one line: in an update's rows, the
    error of ``merge-fields`` and the ``.notes`` of a merge."""
    return "; ".join(_side_problem(side) for side in unread)


def _side_problem(side: SideProblem) -> str:
    if side.fault is SideFault.TOO_LARGE:
        return (
            f"{side.role} file is larger than {side.limit_kib} KiB "
            "(the limit for a key-by-key merge)"
        )
    return f"{side.role} file does not parse: {side.message}"


def worded(why: RowWhy) -> str:
    match why.code:
        case RowCode.LEFTOVER:
            modified = "; modified here" if why.modified else ""
            return f"removed upstream in {why.version}{modified}"
        case RowCode.MODIFIED_HERE:
            return "modified here"
        case RowCode.HELD:
            return (
                f"still has the conflict markers of the update to {why.version}; resolve them first"
            )
        case RowCode.BINARY:
            return "binary file"
        case RowCode.HASH_ONLY:
            return (
                "only the hash of the copied version is known (gbrain's record): no line "
                "merge; keep-mine or take-theirs settles it"
            )
        case RowCode.FRONT_MATTER:
            return "conflict markers at line 1 would break the file's first line (front matter)"
        case RowCode.MERGE_BROKEN:
            state = "could not be checked" if why.unchecked else "is not valid"
            broken = f"the clean line merge {state}: {why.detail}"
            return (
                f"taking {_side_words(why.side)} of the clashing lines: {broken}"
                if why.side
                else broken
            )
        case RowCode.HUNKS_SETTLED:
            return _settled(why, "")
        case RowCode.REGION_HUNKS_SETTLED:
            return _settled(why, " outside its generated region")
        case RowCode.NO_LINES:
            said = merge_note(why.note) if why.note is not None else "binary file"
            return f"{said}: no lines to merge, {why.side}"
        case RowCode.MERGE_NOTE:
            return merge_note(why.note) if why.note is not None else ""
        case RowCode.NOT_PARSED:
            # A journal written before the sides were facts holds the words in ``detail``.
            return side_problems(why.unread) if why.unread else why.detail
        case RowCode.NO_BASELINE:
            return NO_BASELINE
        case RowCode.KEYS_KEPT:
            keys = "key" if why.count == 1 else "keys"
            return f"{why.count} managed {keys} changed on both sides: yours kept, see {why.path}"
        case RowCode.OUTSIDE_REGION:
            return "differs outside its generated region"
        case RowCode.MERGED_OUTSIDE_REGION:
            return "merged outside its generated region"
        case RowCode.HANDED_OVER:
            from tether.flows.lifecycle_plan import ADOPTER_OWNED_REASON

            return f"{ADOPTER_OWNED_REASON}: {why.detail}"
        case RowCode.TEMPLATE_INSTALLED:
            return "template installed"
        case RowCode.TEMPLATE_REFRESHED:
            return f"refreshed from {why.path}"
        case RowCode.TEMPLATE_DIVERGED:
            return "template-installed; matches neither template"
        case RowCode.TEMPLATE_UNAVAILABLE:
            return "template-installed; the installed release's template is unavailable"
        case RowCode.TEMPLATE_NOT_INSTALLED:
            return "template-installed; not installed here"
        case RowCode.TEMPLATE_IN_SYNC:
            return "template-installed; in sync"
        case RowCode.POST_UPDATE_WRITE:
            return "post-update write"


def _settled(why: RowWhy, where: str) -> str:
    """Clashing hunks settled toward one side (``--auto ours``/``theirs``), with the merge's
    note when it has one."""
    hunks = "hunk" if why.count == 1 else "hunks"
    note = f" ({merge_note(why.note)})" if why.note is not None else ""
    return (
        f"{why.count} clashing {hunks}{where} took {_side_words(why.side)}; every other "
        f"change of both sides merged{note}"
    )


def merge_note(note: MergeNote) -> str:
    """Why a merge did not go line by line (``flows/merging.merge_sides``): a plan's row
    and reapply's reasons quote it."""
    match note.code:
        case MergeNoteCode.MEMORY_BOUND:
            why = "a line merge would take more than 4x its size in memory"
        case MergeNoteCode.GIT_FAILED:
            why = note.detail
        case MergeNoteCode.PAST_TEXT_SIZE:
            return note.detail
    whole = note.favor or "one conflict"
    return f"too large for tether's own line merge, and {why}: the whole file is {whole}"


def regen_document(outcome: RegenOutcome) -> dict[str, Any]:
    """A region's outcome as the update document and its text give it: its ``reason`` in
    words."""
    return {
        **outcome.document(),
        "reason": regen_reason(outcome),
        "unrestored_reasons": {why.path: not_restored(why) for why in outcome.unrestored},
    }


def not_restored(why: NotRestored) -> str:
    """Why a file a region's program changed was not put back."""
    from tether.flows.regen import Restore  # loaded already: ``why`` is its own

    match why.code:
        case Restore.NO_COPY:
            return "no pre-run copy (beyond the snapshot budget)"
        case Restore.UNSAFE:
            return f"{why.detail}; not written through it"
    return f"cannot put it back ({why.detail})"


def regen_reason(outcome: RegenOutcome) -> str:
    """Why the region's program did not run or start, else the words the run gave (how the
    program ended, a refusal)."""
    if outcome.why is not None:
        return _not_run(outcome.why)
    fact = outcome.refused or outcome.ended
    if fact is not None:
        from tether.report.lifecycle_steps import program_reason  # reapply's reasons: unused

        return program_reason(fact)
    return outcome.reason


def _not_run(why: NotRunWhy) -> str:
    from tether.flows.regen import HeldBy, NotRun  # loaded already: the outcome is its own

    match why.code:
        case NotRun.PROGRAMS_OFF:
            return f"not run: {why.detail} runs no program the release ships"
        case NotRun.HELD_BACK:
            held = {
                HeldBy.CONFLICT: "{} is left in conflict",
                HeldBy.DELETED: "{} was deleted by you",
                HeldBy.YOURS: "{} is yours (tether own)",
                HeldBy.INPUT_UNRECONCILED: "its input {} fell back to a whole-file conflict",
            }
            return "; ".join(held[by].format(path) for by, path in why.held)
        case NotRun.NO_PROGRAM:
            return "the region declares no program"
        case NotRun.OPERAND_NOT_A_FILE:
            return f"could not start: operand {why.detail!r} is not a file in the project"
        case NotRun.NO_TIME_LIMIT:
            return f"could not start: {why.detail}"
        case NotRun.BACKUP_FAILED:
            return f"could not start: backing up the declared paths failed: {why.detail}"
        case NotRun.LOG_FAILED:
            return f"could not start: cannot write the log: {why.detail}"
