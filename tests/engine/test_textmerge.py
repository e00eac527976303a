"""merge3 against `git merge-file --diff3` (the reference), plus the parts git does not do."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether import git
from tether.engine import textmerge
from tether.engine.textmerge import MergeResult, merge3

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is the reference implementation")


def git_merge(tmp: Path, base: bytes, ours: bytes, theirs: bytes) -> tuple[bytes, int]:
    """(merged bytes, conflict count) from git merge-file; git caps the count at 127."""
    for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
        (tmp / name).write_bytes(data)
    assert GIT is not None
    command = [GIT, "merge-file", "--diff3", "-p", "-L", "ours", "-L", "base", "-L", "theirs"]
    done = subprocess.run(
        [*command, "ours", "base", "theirs"], cwd=tmp, capture_output=True, check=False
    )
    assert 0 <= done.returncode < 128, done.stderr
    return done.stdout, done.returncode


def assert_same_as_git(
    tmp: Path, base: bytes, ours: bytes, theirs: bytes, *, through_wrapper: bool = True
) -> MergeResult:
    """merge3 gives git merge-file's bytes and count; with ``through_wrapper``, so does
    merge3 with ``tether.git.merge_file`` as its line merge (the generated corpora leave
    that out, see ``test_generated_corpus_matches_git``)."""
    result = merge3(base, ours, theirs)
    merged, conflicts = git_merge(tmp, base, ours, theirs)
    assert (result.conflicts > 0) == (conflicts > 0)
    assert min(result.conflicts, 127) == conflicts
    # Same bytes for clean merges (the requirement) and, as it happens, for conflicts too.
    assert result.merged == merged
    # The engine past its bounds (tether.git.merge_file as the line merge) gives the same.
    if through_wrapper:
        assert merge3(base, ours, theirs, line_merge=git.merge_file) == result
    return result


def text(*lines: str, eol: bool = True) -> bytes:
    body = "\n".join(lines)
    return (body + "\n" if eol and lines else body).encode()


ABCDEF = ("a", "b", "c", "d", "e", "f")

# name, base, ours, theirs, clean? — the expected outcome documents git's rules: changes must
# be at least one unchanged base line apart, or identical, to merge cleanly.
TABLE = [
    (
        "far apart",
        text(*ABCDEF),
        text("a", "B", "c", "d", "e", "f"),
        text("a", "b", "c", "d", "E", "f"),
        True,
    ),
    (
        "adjacent edits conflict",
        text(*ABCDEF),
        text("a", "B", "c", "d", "e", "f"),
        text("a", "b", "C", "d", "e", "f"),
        False,
    ),
    (
        "one unchanged line between",
        text(*ABCDEF),
        text("a", "B", "c", "d", "e", "f"),
        text("a", "b", "c", "D", "e", "f"),
        True,
    ),
    (
        "edit vs delete",
        text(*ABCDEF),
        text("a", "b", "C", "d", "e", "f"),
        text("a", "b", "d", "e", "f"),
        False,
    ),
    (
        "edit vs delete of the next line",
        text(*ABCDEF),
        text("a", "b", "C", "d", "e", "f"),
        text("a", "b", "c", "e", "f"),
        False,
    ),
    (
        "both delete the same line",
        text(*ABCDEF),
        text("a", "b", "d", "e", "f"),
        text("a", "b", "d", "e", "f", "g"),
        True,
    ),
    (
        "both delete the same line, far edit",
        text(*ABCDEF, "g", "h"),
        text("a", "b", "d", "e", "f", "g", "h"),
        text("A", "b", "d", "e", "f", "g", "h"),
        True,
    ),
    (
        "both add different lines at EOF",
        text(*ABCDEF),
        text(*ABCDEF, "ours"),
        text(*ABCDEF, "theirs"),
        False,
    ),
    (
        "both add the same lines at EOF",
        text(*ABCDEF),
        text(*ABCDEF, "x", "y"),
        text(*ABCDEF, "x", "y"),
        True,
    ),
    (
        "same lines at EOF and a far edit",
        text(*ABCDEF),
        text(*ABCDEF, "x"),
        text("A", "b", "c", "d", "e", "f", "x"),
        True,
    ),
    (
        "identical change on both sides",
        text(*ABCDEF),
        text("a", "b", "C", "d", "e", "f"),
        text("a", "b", "C", "d", "e", "f", "g"),
        True,
    ),
    (
        "insertions at the same place",
        text(*ABCDEF),
        text("a", "b", "1", "c", "d", "e", "f"),
        text("a", "b", "2", "c", "d", "e", "f"),
        False,
    ),
    (
        "no newline at EOF, far edit",
        text(*ABCDEF, eol=False),
        text("A", "b", "c", "d", "e", "f", eol=False),
        text("a", "b", "c", "d", "e", "F", eol=False),
        True,
    ),
    (
        "theirs adds the newline at EOF",
        text(*ABCDEF, eol=False),
        text("A", "b", "c", "d", "e", "f", eol=False),
        text(*ABCDEF),
        True,
    ),
    (
        "theirs drops the newline at EOF",
        text(*ABCDEF),
        text("A", "b", "c", "d", "e", "f"),
        text(*ABCDEF, eol=False),
        True,
    ),
    (
        "both edit a last line without newline",
        text(*ABCDEF, eol=False),
        text("a", "b", "c", "d", "e", "ours", eol=False),
        text("a", "b", "c", "d", "e", "theirs", eol=False),
        False,
    ),
    (
        "ours appends after a last line without newline",
        text("a", "b", "c", "d", eol=False),
        text("a", "b", "c", "d", "e"),
        text("A", "b", "c", "d", eol=False),
        True,
    ),
    ("empty base, both add different", b"", text("ours"), text("theirs"), False),
    ("empty base, both add the same", b"", text("same"), text("same"), True),
    ("empty base, one side adds", b"", b"", text("theirs"), True),
    (
        "whitespace-only change vs edit",
        text("x = 1", "y = 2", "z = 3"),
        text("x = 1 ", "y = 2", "z = 3"),
        text("x = 2", "y = 2", "z = 3"),
        False,
    ),
    (
        "whitespace-only change far from edit",
        text("x = 1", "y = 2", "z = 3"),
        text("x = 1\t", "y = 2", "z = 3"),
        text("x = 1", "y = 2", "z = 4"),
        True,
    ),
    (
        "indentation change vs same text",
        text("if x:", "    y()", "z()"),
        text("if x:", "\ty()", "z()"),
        text("if x:", "    y()", "z()", "w()"),
        True,
    ),
    ("delete everything vs edit", text(*ABCDEF), b"", text("a", "b", "C", "d", "e", "f"), False),
    (
        "ours inserts, theirs deletes elsewhere",
        text(*ABCDEF),
        text("a", "new", "b", "c", "d", "e", "f"),
        text("a", "b", "c", "d", "f"),
        True,
    ),
    (
        "blank lines",
        text("a", "", "b", "", "c"),
        text("a", "", "", "b", "", "c"),
        text("a", "", "b", "", "C"),
        True,
    ),
]


@needs_git
@pytest.mark.parametrize(
    ("base", "ours", "theirs", "clean"), [row[1:] for row in TABLE], ids=[row[0] for row in TABLE]
)
def test_table_matches_git(
    tmp_path: Path, base: bytes, ours: bytes, theirs: bytes, clean: bool
) -> None:
    result = assert_same_as_git(tmp_path, base, ours, theirs)
    assert (result.conflicts == 0) == clean


# --- the generated corpus --------------------------------------------------------------------

# A small alphabet makes repeated lines (the hard part for alignment); the variants of "x = 1"
# are whitespace-only changes; "" is a blank line.
LINES = st.sampled_from(["a", "b", "c", "", "}", "x = 1", "x = 1 ", "\tx = 1"])


@st.composite
def edited(draw: st.DrawFn, base: list[str]) -> list[str]:
    """``base`` after up to four random insert / delete / replace runs."""
    lines = list(base)
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(lines)))
        kind = draw(st.sampled_from(["insert", "delete", "replace"]))
        new = draw(st.lists(LINES, min_size=1, max_size=3))
        count = draw(st.integers(1, 3))
        if kind == "insert":
            lines[at:at] = new
        elif kind == "delete":
            del lines[at : at + count]
        else:
            lines[at : at + count] = new
    return lines


@st.composite
def merges(draw: st.DrawFn) -> tuple[bytes, bytes, bytes]:
    base = draw(st.lists(LINES, max_size=12))  # includes the empty base
    ours, theirs = draw(edited(base)), draw(edited(base))
    # Any side may lack its final newline.
    newline = [draw(st.booleans()) for _ in range(3)]
    return (
        text(*base, eol=newline[0]),
        text(*ours, eol=newline[1]),
        text(*theirs, eol=newline[2]),
    )


@needs_git
@settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=merges())
def test_generated_corpus_matches_git(tmp_path: Path, case: tuple[bytes, bytes, bytes]) -> None:
    """Each case against git merge-file itself. ``tether.git.merge_file`` runs that same
    command on the same bytes; what it does differently by input is a second run when
    favoring a side of a merge with conflicts, and the count past 127 conflicts (which
    twelve-line files cannot reach). The table (clean and conflicting rows, plain and
    favored) and the large files hold it to the engine; here it cost one to three more git
    processes a case."""
    assert_same_as_git(tmp_path, *case, through_wrapper=False)


@needs_git
@pytest.mark.parametrize("seed", range(3))
def test_large_files_match_git(tmp_path: Path, seed: int) -> None:
    """Thousands of lines and hundreds of edits: exercises git's cut-offs in the diff search
    (a good-enough snake after 256 steps, the furthest path after ~sqrt(N)) and the
    set-aside of very common lines."""
    rng = random.Random(seed)
    alphabet = [f"line {i}" for i in range(60)] + ["", "", "}"]
    base = [rng.choice(alphabet) for _ in range(2500)]

    def edit(lines: list[str]) -> list[str]:
        lines = list(lines)
        for _ in range(250):
            at = rng.randrange(len(lines) + 1)
            lines[at : at + rng.randint(0, 4)] = [
                rng.choice(alphabet) for _ in range(rng.randint(0, 4))
            ]
        return lines

    sides = text(*base), text(*edit(base)), text(*edit(base))
    plain = assert_same_as_git(tmp_path, *sides)
    assert_favored_as_git(tmp_path, *sides, plain=plain)


# --- a favored side: git merge-file --ours / --theirs ----------------------------------------


def git_favored(tmp: Path, favor: str, *style: str) -> bytes:
    """``git merge-file --ours|--theirs -p`` (git's ``merge -X ours|theirs`` on one file) of
    the files ``ours``, ``base`` and ``theirs`` in ``tmp``."""
    assert GIT is not None
    done = subprocess.run(
        [GIT, "merge-file", f"--{favor}", *style, "-p", "ours", "base", "theirs"],
        cwd=tmp,
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr  # a favored merge leaves no conflict
    return done.stdout


def assert_favored_as_git(
    tmp: Path,
    base: bytes,
    ours: bytes,
    theirs: bytes,
    *,
    through_wrapper: bool = True,
    plain: MergeResult | None = None,
) -> None:
    """merge3 favoring either side gives git's bytes; ``plain`` is merge3's unfavored result
    when the caller has it already."""
    if plain is None:
        plain = merge3(base, ours, theirs)
    for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
        (tmp / name).write_bytes(data)
    for favor in ("ours", "theirs"):
        result = merge3(base, ours, theirs, favor=favor)
        # git's default (merge) style refines conflicts before favoring, --diff3 does not:
        # the bytes are the same either way, and the same as tether's.
        assert result.merged == git_favored(tmp, favor)
        assert result.merged == git_favored(tmp, favor, "--diff3")
        assert result.conflicts == 0 and result.settled == plain.conflicts
        # Past the pure bounds, git itself does it, with the same count.
        if through_wrapper:
            assert merge3(base, ours, theirs, line_merge=git.merge_file, favor=favor) == result


@needs_git
@pytest.mark.parametrize(
    ("base", "ours", "theirs", "clean"), [row[1:] for row in TABLE], ids=[row[0] for row in TABLE]
)
def test_favored_table_matches_git_merge_file_ours_and_theirs(
    tmp_path: Path, base: bytes, ours: bytes, theirs: bytes, clean: bool
) -> None:
    assert_favored_as_git(tmp_path, base, ours, theirs)


@needs_git
@settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=merges())
def test_favored_generated_corpus_matches_git_merge_file(
    tmp_path: Path, case: tuple[bytes, bytes, bytes]
) -> None:
    """Against git merge-file itself, as ``test_generated_corpus_matches_git``."""
    assert_favored_as_git(tmp_path, *case, through_wrapper=False)


def test_favoring_a_side_keeps_every_change_that_does_not_clash() -> None:
    """Upstream's change two lines away from the clash stays in either way (what a whole
    file kept or taken would lose)."""
    base = text("level: info", "theme: light", "retries: 3")
    ours = text("level: info", "theme: light", "retries: 10")
    theirs = text("level: warn", "theme: light", "retries: 5")
    assert merge3(base, ours, theirs, favor="ours").merged == text(
        "level: warn", "theme: light", "retries: 10"
    )
    assert merge3(base, ours, theirs, favor="theirs").merged == text(
        "level: warn", "theme: light", "retries: 5"
    )
    with pytest.raises(ValueError):
        merge3(base, ours, theirs, favor="mine")


# --- behaviour beyond git --------------------------------------------------------------------


def test_repeated_blocks_keep_the_edit_in_the_second_block() -> None:
    block = ["def handler():", "    setup()", "    return run()", ""]
    base = text(*block, *block)
    second = ["def handler():", "    setup()", "    return run(fast=True)", ""]
    ours = text(*block, *second)
    inserted = ["def new_first():", "    pass", ""]
    theirs = text(*inserted, *block, *block)
    result = merge3(base, ours, theirs)
    assert result.conflicts == 0
    assert result.merged == text(*inserted, *block, *second)


def test_one_sided_changes_never_reach_the_diff(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("the line merge ran")

    monkeypatch.setattr(textmerge, "merge_lines", boom)
    base, changed = text("a", "b"), text("a", "B")
    assert merge3(base, base, changed) == MergeResult(changed, 0)
    assert merge3(base, changed, base) == MergeResult(changed, 0)
    assert merge3(base, changed, changed) == MergeResult(changed, 0)


def test_labels_name_the_markers() -> None:
    result = merge3(text("a"), text("b"), text("c"), labels=("mine", "v1.0", "v2.0"))
    assert result.merged == b"<<<<<<< mine\nb\n||||||| v1.0\na\n=======\nc\n>>>>>>> v2.0\n"
    assert result.conflicts == 1


def test_conflict_on_a_last_line_without_newline_keeps_markers_on_their_own_lines() -> None:
    result = merge3(text("a", "b", eol=False), text("a", "B", eol=False), text("a", "c", eol=False))
    assert result.merged == (b"a\n<<<<<<< ours\nB\n||||||| base\nb\n=======\nc\n>>>>>>> theirs\n")


def crlf(data: bytes) -> bytes:
    return data.replace(b"\n", b"\r\n")


def test_crlf_checkout_merges_cleanly_with_lf_releases() -> None:
    base = text(*ABCDEF)
    ours = crlf(text("a", "B", "c", "d", "e", "f"))
    theirs = text("a", "b", "c", "d", "E", "f")
    result = merge3(base, ours, theirs)
    assert result == MergeResult(crlf(text("a", "B", "c", "d", "E", "f")), 0)


def test_crlf_conflict_markers_follow_ours() -> None:
    result = merge3(text("a", "b"), crlf(text("a", "B")), text("a", "c"))
    assert result.conflicts == 1
    assert result.merged == crlf(
        text("a", "<<<<<<< ours", "B", "||||||| base", "b", "=======", "c", ">>>>>>> theirs")
    )


def test_line_ending_only_changes() -> None:
    base = text(*ABCDEF)
    # The adopter's editor rewrote every line ending; upstream changed one line.
    theirs = text("a", "b", "C", "d", "e", "f")
    assert merge3(base, crlf(base), theirs).merged == crlf(theirs)
    # Upstream switched to CRLF and changed nothing else: the adopter's file stands.
    ours = text("a", "B", "c", "d", "e", "f")
    assert merge3(base, ours, crlf(base)) == MergeResult(ours, 0)


def test_lf_adopter_keeps_lf_against_crlf_upstream() -> None:
    base = crlf(text(*ABCDEF))
    ours = text("a", "B", "c", "d", "e", "f")  # the adopter normalised to LF and edited
    theirs = crlf(text("a", "b", "c", "d", "E", "f"))
    assert merge3(base, ours, theirs) == MergeResult(text("a", "B", "c", "d", "E", "f"), 0)


def test_mixed_line_endings_are_merged_byte_for_byte() -> None:
    base = b"a\r\nb\nc\nd\ne\n"
    ours = b"A\r\nb\nc\nd\ne\n"
    theirs = b"a\r\nb\nc\nd\nE\n"
    assert merge3(base, ours, theirs) == MergeResult(b"A\r\nb\nc\nd\nE\n", 0)


BOM = b"\xef\xbb\xbf"


def test_bom_state_of_ours_wins() -> None:
    base = text(*ABCDEF)
    theirs = text("a", "b", "c", "d", "E", "f")
    ours = BOM + text("A", "b", "c", "d", "e", "f")
    assert merge3(base, ours, theirs).merged == BOM + text("A", "b", "c", "d", "E", "f")
    # Upstream added a BOM; the adopter has none: none is written.
    ours = text("A", "b", "c", "d", "e", "f")
    assert merge3(base, ours, BOM + theirs).merged == text("A", "b", "c", "d", "E", "f")


def test_binary_is_never_text_merged() -> None:
    base, ours, theirs = b"a\0b\n", b"a\0B\n", b"A\0b\n"
    assert merge3(base, ours, theirs) == MergeResult(ours, 1, binary=True)
    # Changed on one side only it still resolves, flagged binary.
    assert merge3(base, base, theirs) == MergeResult(theirs, 0, binary=True)
    assert merge3(base, ours, base) == MergeResult(ours, 0, binary=True)
    # One binary side is enough.
    assert merge3(text("a"), text("b"), b"\0").binary


def test_nul_after_the_first_8000_bytes_is_text() -> None:
    base = text(*ABCDEF) + b"x" * 8000 + b"\0\n"
    ours = base.replace(b"a\n", b"A\n", 1)
    theirs = base.replace(b"f\n", b"F\n", 1)
    result = merge3(base, ours, theirs)
    assert not result.binary
    assert result.merged == base.replace(b"a\n", b"A\n", 1).replace(b"f\n", b"F\n", 1)


@needs_git
def test_non_utf8_text_is_merged_as_bytes(tmp_path: Path) -> None:
    base = "caf\xe9\nna\xefve\nr\xe9sum\xe9\nfa\xe7ade\n".encode("latin-1")
    ours = base.replace(b"caf\xe9", b"CAF\xc9")
    theirs = base.replace(b"fa\xe7ade", b"FA\xc7ADE")
    result = assert_same_as_git(tmp_path, base, ours, theirs)
    assert result.merged == b"CAF\xc9\nna\xefve\nr\xe9sum\xe9\nFA\xc7ADE\n"


# --- merges past the pure engine's bounds ----------------------------------------------------


@needs_git
def test_git_merge_file_counts_conflicts_past_gits_exit_status_cap() -> None:
    """git's exit status stops at 127 conflicts; the count tether reports does not."""
    base = text(*(f"line {i}" for i in range(600)))
    ours = text(*(f"line {i}" if i % 3 else f"ours {i}" for i in range(600)))
    theirs = text(*(f"line {i}" if i % 3 else f"theirs {i}" for i in range(600)))
    expected = merge3(base, ours, theirs)
    assert expected.conflicts == 200
    assert merge3(base, ours, theirs, line_merge=git.merge_file) == expected


@needs_git
@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
def test_git_line_merge_keeps_line_endings_and_bom(eol: bytes) -> None:
    base = b"\xef\xbb\xbf" + eol.join(f"line {i}".encode() for i in range(50)) + eol
    ours = base.replace(b"line 3" + eol, b"mine" + eol)
    theirs = base.replace(b"line 40" + eol, b"upstream" + eol)
    expected = merge3(base, ours, theirs)
    assert expected.conflicts == 0 and b"mine" in expected.merged
    assert merge3(base, ours, theirs, line_merge=git.merge_file) == expected


def test_pure_bounds_count_lines_of_the_longest_side_and_bytes_of_all() -> None:
    limit = textmerge.PURE_MERGE_MAX_LINES
    at_limit, past = b"x\n" * limit, b"x\n" * (limit + 1)
    assert textmerge.within_pure_bounds(at_limit, at_limit, at_limit)
    assert not textmerge.within_pure_bounds(b"", past, b"")
    wide = b"y" * (textmerge.PURE_MERGE_MAX_BYTES // 3 + 1)
    assert not textmerge.within_pure_bounds(wide, wide, wide)  # three long lines
