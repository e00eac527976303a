"""A status's and a check's notes and JSON document: the words the report object leaves to
``report/`` (why the files were not compared, put before its own notes, which
``report/notes.py`` words; what an update stopped half way asks; each finding's next
steps). Apart from the human
renderers, so ``status --json`` and ``check --json`` load no more than they use."""

from __future__ import annotations

from tether.report.notes import worded_notes

TYPE_CHECKING = False  # typing itself costs ~3 ms of start-up, which status and check pay
if TYPE_CHECKING:
    from tether.flows.check import CheckReport, Finding
    from tether.flows.status import StatusReport, UnfinishedUpdate


def status_notes(report: StatusReport) -> list[str]:
    """Every note of a status: why the files were not compared first, then the rest."""
    notes = []
    if report.not_compared is not None:
        notes.append(
            f"the files were not compared with the installed release: {report.not_compared.why}"
        )
        if report.not_compared.unfinished_verb is not None:
            notes.append(
                "give the rerun the same --source the interrupted "
                f"{report.not_compared.unfinished_verb} was given"
            )
    return notes + worded_notes(report.notes)


def unfinished_message(unfinished: UnfinishedUpdate) -> str:
    """What an update stopped half way asks of a person: finish it, or roll it back."""
    verb = unfinished.verb
    head = (
        f"unfinished {verb} {unfinished.from_version or '(none)'} → {unfinished.to_version} "
        f"(run {unfinished.run_id})"
    )
    rerun = f"tether {unfinished.command or verb}"
    if unfinished.abandon_started:
        return (
            f"{head}: its abandon was interrupted; run 'tether {verb} --abandon' again to "
            "finish rolling it back"
        )
    if unfinished.state_written:
        return (
            f"{head}: its new state is recorded but it stopped before it completed; rerun "
            f"'{rerun}' to finish it"
        )
    return f"{head}: rerun '{rerun}' to finish or 'tether {verb} --abandon' to roll back"


def _worded(report: StatusReport) -> dict[str, object]:
    """The words a status's JSON document adds: its notes, an unfinished run's message."""
    words: dict[str, object] = {"notes": status_notes(report)}
    if report.unfinished is not None:
        message = unfinished_message(report.unfinished)
        words["unfinished"] = {**report.unfinished.document(), "message": message}
    return words


def status_document(report: StatusReport) -> dict[str, object]:
    """A status's JSON document, with the words of its facts."""
    return {**report.to_json(), **_worded(report)}


def check_document(report: CheckReport) -> dict[str, object]:
    """A check's JSON document, with each finding's next steps and the words of its
    status's facts."""
    findings = [f.to_json(check_next_steps(f, report.status)) for f in report.findings]
    return {**report.to_json(), "findings": findings, **_worded(report.status)}


def check_next_steps(finding: Finding, status: StatusReport) -> tuple[str, ...]:
    """What to do about a finding of ``check``, in the order to consider it: mostly the
    command that shows it, keeps it or finishes it."""
    # Put off to a check: status never loads check's flow nor shell quoting.
    import shlex

    from tether.flows import check

    path = finding.path or ""
    quoted = shlex.quote(path)
    match finding.reason:
        case check.RUN_IN_PROGRESS:
            pid = status.running.get("pid") if status.running is not None else None
            return (f"wait for it to end (pid {pid}), then check again",)
        case check.UNFINISHED_UPDATE:
            unfinished = status.unfinished
            if unfinished is None:
                return ()
            steps = [f"tether {unfinished.command or 'update'}"]
            if not unfinished.state_written:
                steps.append(f"tether {unfinished.verb} --abandon")
            return tuple(steps)
        case check.OWNED_DRIFT:
            return (f"tether diff {quoted}", f"tether own {quoted}")
        case check.UNRESOLVED_CONFLICTS:
            conflict = next(c for c in status.conflicts if c["path"] == path)
            artifact = conflict["artifact"]
            if conflict.get("style") == "markers":
                return (f"resolve the conflict markers in {artifact}",)
            return (f"resolve {path} using {artifact}, then delete {artifact}",)
        case check.ACTION_REQUIRED:
            item = next(i for i in status.action_items if str(i.get("id")) == finding.migration)
            settle = f"settle what stopped migration {finding.migration} ({item.get('command')})"
            return (settle, "tether migrations --rerun")
        case check.NOT_REGULAR_FILES:
            return (f"put a regular file at {quoted}", f"tether own {quoted}")
        case check.LEFTOVERS:
            steps = [f"tether own {quoted}", f"rm {quoted}"]
            if path in status.leftovers_unmodified:
                steps.append("tether update --delete-removed")
            return tuple(steps)
        case check.UPDATE_AVAILABLE:
            return (f"tether update --to {status.latest_version}",)
    return ()
