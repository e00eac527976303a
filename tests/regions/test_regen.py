"""The regeneration runner: refusals, confinement, timeout, failures. Real processes."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from process_helpers import none_left_in
from tether.engine.regions import RegenSpec, RegionDecl
from tether.flows.lifecycle_plan import ProgramCode, ProgramWhy
from tether.flows.regen import (
    HeldBy,
    NotRestored,
    NotRun,
    NotRunWhy,
    RegenOutcome,
    Restore,
    run_regeneration,
    skipped_outcome,
)
from tether.report.reasons import not_restored, regen_document, regen_reason

SCRIPT = "scripts/gen.sh"


def make_project(tmp_path: Path, body: str) -> Path:
    root = tmp_path / "project"
    (root / "scripts").mkdir(parents=True)
    (root / SCRIPT).write_text("set -eu\n" + body)
    (root / "out.md").write_text("old region\n")
    (root / "keep.txt").write_text("adopter notes\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


def region(
    interpreter: str = "bash", operand: str = SCRIPT, args: tuple[str, ...] = ()
) -> RegionDecl:
    return RegionDecl(
        id="gen",
        start_marker="# s",
        end_marker="# e",
        paths=("out.md",),
        regenerate=RegenSpec(interpreter, operand, args),
    )


def run(root: Path, decl: RegionDecl, **kwargs: Any) -> RegenOutcome:
    """Run with the project's shipped paths: the script and the declared file."""
    return run_regeneration(root, decl, {SCRIPT, "out.md"}, **kwargs)


def test_success_rewrites_the_declared_path_logs_and_backs_up(tmp_path: Path) -> None:
    root = make_project(tmp_path, 'echo "generated $1" > out.md\necho hello from gen\n')
    log = tmp_path / "logs" / "regen.log"
    backup = tmp_path / "backup"
    outcome = run(root, region(args=("with space",)), log_path=log, backup_dir=backup)
    assert outcome.status == "regenerated", outcome
    assert outcome.exit_code == 0 and not outcome.could_not_start
    assert outcome.command == "bash scripts/gen.sh 'with space'"
    assert outcome.rewritten_paths == ("out.md",)
    assert outcome.reverted_paths == () and outcome.new_outside_paths == ()
    assert (root / "out.md").read_text() == "generated with space\n"
    assert outcome.backed_up_paths == ("out.md",)
    assert (backup / "out.md").read_text() == "old region\n"
    log_text = log.read_text()
    assert "$ bash scripts/gen.sh 'with space'" in log_text
    assert "hello from gen" in log_text and "ran and exited 0" in log_text


def test_existing_backup_copy_is_kept(tmp_path: Path) -> None:
    """The one backup rule: the copy an earlier step saved (the adopter's original) is never
    written over; the bytes the program starts from go beside it."""
    root = make_project(tmp_path, "echo new > out.md\n")
    backup = tmp_path / "backup"
    backup.mkdir()
    (backup / "out.md").write_text("the adopter's original\n")
    outcome = run(root, region(), backup_dir=backup)
    assert outcome.backed_up_paths == ("out.md",)
    assert (backup / "out.md").read_text() == "the adopter's original\n"
    assert (backup / "out.md.2").read_text() == "old region\n"


def test_backup_is_a_copy_the_program_cannot_edit_in_place(tmp_path: Path) -> None:
    """The program may append to a declared file in place: its backup must not share it."""
    root = make_project(tmp_path, "echo appended >> out.md\n")
    backup = tmp_path / "backup"
    outcome = run(root, region(), backup_dir=backup)
    assert outcome.status == "regenerated", outcome
    assert (root / "out.md").read_text() == "old region\nappended\n"
    assert (backup / "out.md").read_text() == "old region\n"


def test_same_bytes_rewritten_is_not_reported(tmp_path: Path) -> None:
    root = make_project(
        tmp_path, "printf 'old region\\n' > out.md\nprintf 'adopter notes\\n' > keep.txt\n"
    )
    outcome = run(root, region())
    assert outcome.status == "regenerated"
    assert outcome.rewritten_paths == () and outcome.reverted_paths == ()


@pytest.mark.parametrize(
    ("decl", "expected"),
    [
        (region(operand="/etc/hostname"), "absolute"),
        (region(operand="scripts/../scripts/gen.sh"), "'..'"),
        (region(operand="keep.txt"), "not a path the release ships"),
        (region(interpreter="/bin/bash"), "not a bare program name"),
        (region(interpreter="bash -c"), "not a bare program name"),
        (region(interpreter="./bash"), "not a bare program name"),
    ],
)
def test_refusals_never_run(tmp_path: Path, decl: RegionDecl, expected: str) -> None:
    root = make_project(tmp_path, "touch ran\n")
    outcome = run(root, decl)
    assert outcome.status == "refused"
    assert outcome.reason == "" and outcome.refused is not None  # the fact, worded by report/
    assert expected in regen_reason(outcome)
    assert outcome.command  # the literal command is still reported
    assert not (root / "ran").exists()


def test_operand_linked_out_of_the_project_is_refused(tmp_path: Path) -> None:
    root = make_project(tmp_path, "")
    outside = tmp_path / "elsewhere.sh"
    outside.write_text("touch ran\n")
    (root / "scripts" / "linked.sh").symlink_to(outside)
    outcome = run_regeneration(root, region(operand="scripts/linked.sh"), {"scripts/linked.sh"})
    assert outcome.status == "refused"
    assert outcome.refused == ProgramWhy(ProgramCode.OPERAND_OUTSIDE, operand="scripts/linked.sh")
    assert regen_reason(outcome) == (
        "operand 'scripts/linked.sh' resolves through a link out of the project"
    )
    assert not (root / "ran").exists()


def test_no_program_is_skipped(tmp_path: Path) -> None:
    root = make_project(tmp_path, "")
    decl = RegionDecl("gen", "# s", "# e", ("out.md",), None)
    outcome = run(root, decl)
    assert (outcome.status, outcome.why) == ("skipped", NotRunWhy(NotRun.NO_PROGRAM))
    assert regen_reason(outcome) == "the region declares no program"
    held = NotRunWhy(NotRun.HELD_BACK, held=((HeldBy.CONFLICT, "out.md"),))
    assert skipped_outcome(region(), held).command == "bash scripts/gen.sh"


def test_a_missing_operand_could_not_start_and_says_so_in_report(tmp_path: Path) -> None:
    root = make_project(tmp_path, "")
    (root / "scripts/gen.sh").unlink()
    outcome = run(root, region())
    assert (outcome.status, outcome.could_not_start, outcome.reason) == ("failed", True, "")
    assert outcome.why == NotRunWhy(NotRun.OPERAND_NOT_A_FILE, "scripts/gen.sh")
    assert regen_document(outcome)["reason"] == (
        "could not start: operand 'scripts/gen.sh' is not a file in the project"
    )


# Every fact of a region's program that did not run or start, and its words.
NOT_RUN_WORDS = [
    (
        NotRunWhy(NotRun.PROGRAMS_OFF, "--no-programs"),
        "not run: --no-programs runs no program the release ships",
    ),
    (
        NotRunWhy(
            NotRun.HELD_BACK,
            held=(
                (HeldBy.CONFLICT, "a.md"),
                (HeldBy.DELETED, "b.md"),
                (HeldBy.YOURS, "c.md"),
                (HeldBy.INPUT_UNRECONCILED, "d.json"),
            ),
        ),
        "a.md is left in conflict; b.md was deleted by you; c.md is yours (tether own); "
        "its input d.json fell back to a whole-file conflict",
    ),
    (NotRunWhy(NotRun.NO_PROGRAM), "the region declares no program"),
    (
        NotRunWhy(NotRun.OPERAND_NOT_A_FILE, "s/g.sh"),
        "could not start: operand 's/g.sh' is not a file in the project",
    ),
    (NotRunWhy(NotRun.NO_TIME_LIMIT, "X='0': bad"), "could not start: X='0': bad"),
    (
        NotRunWhy(NotRun.BACKUP_FAILED, "disk full"),
        "could not start: backing up the declared paths failed: disk full",
    ),
    (NotRunWhy(NotRun.LOG_FAILED, "denied"), "could not start: cannot write the log: denied"),
]


@pytest.mark.parametrize(("why", "words"), NOT_RUN_WORDS)
def test_each_not_run_fact_is_worded_in_report(why: NotRunWhy, words: str) -> None:
    assert regen_reason(RegenOutcome("gen", "skipped", "bash g.sh", why=why)) == words


def test_every_not_run_code_has_words() -> None:
    assert {why.code for why, _ in NOT_RUN_WORDS} == set(NotRun)


def test_writes_outside_the_declared_paths_are_reverted(tmp_path: Path) -> None:
    body = (
        "echo regenerated > out.md\n"
        "echo clobbered > keep.txt\n"
        "chmod 600 keep.txt\n"
        "rm scripts/helper.txt\n"
        "mkdir -p made && echo stray > made/new.txt\n"
        "echo ignored > .git/HEAD\n"
    )
    root = make_project(tmp_path, body)
    (root / "scripts" / "helper.txt").write_text("helper\n")
    os.chmod(root / "keep.txt", 0o644)
    old_mtime = (root / "keep.txt").stat().st_mtime_ns
    outcome = run(root, region())
    assert outcome.status == "regenerated"
    assert (root / "out.md").read_text() == "regenerated\n"
    assert outcome.rewritten_paths == ("out.md",)
    assert outcome.reverted_paths == ("keep.txt", "scripts/helper.txt")
    assert (root / "keep.txt").read_text() == "adopter notes\n"
    assert (root / "keep.txt").stat().st_mode & 0o777 == 0o644
    assert (root / "keep.txt").stat().st_mtime_ns == old_mtime
    assert (root / "scripts" / "helper.txt").read_text() == "helper\n"
    # A new file is reported and kept: tether never deletes bytes it cannot restore.
    assert outcome.new_outside_paths == ("made/new.txt",)
    assert (root / "made" / "new.txt").exists()
    # .git is not watched.
    assert (root / ".git" / "HEAD").read_text() == "ignored\n"


def test_file_beyond_the_snapshot_budget_is_reported_unrestored(tmp_path: Path) -> None:
    root = make_project(tmp_path, "echo clobbered > keep.txt\n")
    outcome = run(root, region(), snapshot_budget=1)
    assert outcome.unrestored_paths == ("keep.txt",)
    assert outcome.reverted_paths == ()
    # Why it was not put back is a fact on the outcome, worded by report/ in the document.
    assert outcome.unrestored == (NotRestored("keep.txt", Restore.NO_COPY),)
    assert outcome.document()["unrestored_reasons"] == {}
    assert regen_document(outcome)["unrestored_reasons"] == {
        "keep.txt": "no pre-run copy (beyond the snapshot budget)"
    }


@pytest.mark.parametrize(
    ("why", "words"),
    [
        (NotRestored("a", Restore.NO_COPY), "no pre-run copy (beyond the snapshot budget)"),
        (
            NotRestored("d/a", Restore.UNSAFE, "d is a link pointing outside the project"),
            "d is a link pointing outside the project; not written through it",
        ),
        (
            NotRestored("a", Restore.FAILED, "Permission denied"),
            "cannot put it back (Permission denied)",
        ),
    ],
)
def test_why_a_file_was_not_put_back_is_worded_in_report(why: NotRestored, words: str) -> None:
    assert not_restored(why) == words


def test_log_inside_the_project_is_not_a_stray_file(tmp_path: Path) -> None:
    root = make_project(tmp_path, "echo x > out.md\necho output\n")
    outcome = run(root, region(), log_path=root / "logs" / "regen.log")
    assert outcome.status == "regenerated"
    assert outcome.new_outside_paths == ()


def test_timeout_kills_the_process_group(tmp_path: Path) -> None:
    root = make_project(tmp_path, "echo partial > out.md\nsleep 120\necho late > out.md\n")
    began = time.monotonic()
    outcome = run(root, region(), timeout=0.3)
    assert time.monotonic() - began < 60  # stopped at the deadline, not after the sleep
    assert outcome.status == "failed"
    assert not outcome.could_not_start and outcome.exit_code is None
    assert "timed out after 0.3 s" in regen_reason(outcome)
    # A failed run leaves the project as it was, declared paths included.
    assert (root / "out.md").read_text() == "old region\n"
    assert outcome.reverted_paths == ("out.md",)
    assert none_left_in(root)  # the script and its sleep: nothing is left to write later


def test_missing_interpreter_could_not_start(tmp_path: Path) -> None:
    root = make_project(tmp_path, "")
    outcome = run(root, region(interpreter="tether-test-no-such-program"))
    assert outcome.status == "failed"
    assert outcome.could_not_start and outcome.exit_code is None
    assert regen_reason(outcome).startswith("could not start 'tether-test-no-such-program'")
    assert outcome.command == "tether-test-no-such-program scripts/gen.sh"


def test_missing_operand_could_not_start(tmp_path: Path) -> None:
    root = make_project(tmp_path, "")
    (root / SCRIPT).unlink()
    outcome = run(root, region())
    assert outcome.status == "failed" and outcome.could_not_start


def test_non_zero_exit_ran_and_exited(tmp_path: Path) -> None:
    root = make_project(tmp_path, "echo half > out.md\necho 'roster is broken' >&2\nexit 3\n")
    outcome = run(root, region())
    assert outcome.status == "failed"
    assert not outcome.could_not_start
    assert outcome.exit_code == 3
    assert outcome.reason == ""  # the fact, worded by report/
    assert outcome.ended == ProgramWhy(ProgramCode.EXITED, exit_code=3)
    assert regen_reason(outcome) == "ran and exited 3"
    assert "roster is broken" in outcome.output_tail
    assert (root / "out.md").read_text() == "old region\n"
    assert outcome.rewritten_paths == ()


def test_failed_run_removes_a_declared_file_it_created(tmp_path: Path) -> None:
    root = make_project(tmp_path, "echo half > out.md\nexit 1\n")
    (root / "out.md").unlink()
    outcome = run(root, region())
    assert outcome.status == "failed"
    assert not (root / "out.md").exists()
    assert outcome.reverted_paths == ("out.md",)


def test_document_is_plain_data(tmp_path: Path) -> None:
    root = make_project(tmp_path, "exit 2\n")
    document = run(root, region()).document()
    assert document["status"] == "failed" and document["exit_code"] == 2
    assert document["command"] == "bash scripts/gen.sh"
