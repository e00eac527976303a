"""The preservation verifier: catches lost adopter lines, never flags a merge3 result."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.cli import verify_cmd
from tether.cli.main import main
from tether.engine.textmerge import merge3
from tether.engine.verify import VerifyResult, verify_preserved
from tether.errors import TetherError


def text(*lines: str, eol: bool = True) -> bytes:
    body = "\n".join(lines)
    return (body + "\n" if eol and lines else body).encode()


AGENT = ("name: reviewer", "model: sonnet", "tools: read", "", "Review the diff.")


def test_identical_result_is_preserved() -> None:
    ours = text("name: reviewer", "model: opus", "tools: read", "", "Review the diff.")
    assert verify_preserved(text(*AGENT), ours, ours) == VerifyResult(True, [], [])


def test_dropped_short_line_is_caught() -> None:
    # "model: opus" is 11 characters: no length threshold may excuse it.
    ours = text("name: reviewer", "model: opus", "tools: read", "", "Review the diff.")
    result = text("name: reviewer", "model: sonnet", "tools: read", "", "Review the diff!")
    verdict = verify_preserved(text(*AGENT), ours, result)
    assert not verdict.preserved
    assert verdict.missing == [(2, "model: opus")]
    assert verdict.readded == [(2, "model: sonnet")]


def test_dropped_added_line_is_caught() -> None:
    ours = text(*AGENT[:3], "effort: high", *AGENT[3:])
    result = text(*AGENT[:2], "tools: read, write", *AGENT[3:])
    verdict = verify_preserved(text(*AGENT), ours, result)
    # "tools: read" was upstream's to change; only the adopter's own line counts.
    assert verdict == VerifyResult(False, [(4, "effort: high")], [])


def test_re_added_deleted_line_is_caught() -> None:
    ours = text("name: reviewer", "tools: read", "", "Review the diff.")  # model deleted
    result = text(*AGENT[:4], "Review the whole diff.")
    verdict = verify_preserved(text(*AGENT), ours, result)
    assert verdict == VerifyResult(False, [], [(2, "model: sonnet")])


def test_deleted_line_at_the_start_and_end_coming_back_is_caught() -> None:
    base = text("a", "b", "c", "d")
    ours = text("b", "c")
    assert verify_preserved(base, ours, text("a", "b", "c")).readded == [(1, "a")]
    assert verify_preserved(base, ours, text("b", "c", "d")).readded == [(4, "d")]


def test_line_surviving_only_inside_a_longer_line_is_missing() -> None:
    ours = text("name: reviewer", "model: opus", *AGENT[2:])
    result = text("name: reviewer", "# model: opus (was)", *AGENT[2:])
    verdict = verify_preserved(text(*AGENT), ours, result)
    assert verdict.missing == [(2, "model: opus")]


def test_reordered_lines_are_missing() -> None:
    base = text("a", "b")
    ours = text("a", "first", "second", "b")
    verdict = verify_preserved(base, ours, text("a", "second", "first", "b"))
    assert not verdict.preserved
    assert len(verdict.missing) == 1


def test_equal_line_elsewhere_in_ours_is_no_false_alarm() -> None:
    base = text("x: 1", "y: 2", "x: 1", "z: 3")
    ours = text("x: 1", "y: 2", "z: 3")  # the second "x: 1" deleted
    result = text("x: 1", "y: 2", "z: 4")  # upstream's z change merged
    assert verify_preserved(base, ours, result).preserved


def test_upstream_changes_elsewhere_are_fine() -> None:
    ours = text("name: reviewer", "model: opus", *AGENT[2:])
    result = text("name: reviewer", "model: opus", "tools: read, grep", "", "Review it.")
    assert verify_preserved(text(*AGENT), ours, result).preserved


def test_line_endings_bom_and_final_newline_are_not_changes() -> None:
    ours = text("name: reviewer", "model: opus", *AGENT[2:])
    result = b"\xef\xbb\xbf" + ours.replace(b"\n", b"\r\n")[:-2]
    assert verify_preserved(text(*AGENT), ours, result).preserved


def test_ours_side_of_a_conflict_counts_as_present() -> None:
    base = text(*AGENT)
    ours = text("name: reviewer", "model: opus", *AGENT[2:])
    theirs = text("name: reviewer", "model: haiku", *AGENT[2:])
    merged = merge3(base, ours, theirs)
    assert merged.conflicts == 1
    # The base and theirs sides hold "model: sonnet"/"model: haiku": not re-added lines.
    assert verify_preserved(base, ours, merged.merged).preserved
    # A hand-resolution that took theirs is caught.
    assert verify_preserved(base, ours, theirs).missing == [(2, "model: opus")]


def test_everything_deleted() -> None:
    assert verify_preserved(text("a", "b"), b"", b"").preserved
    assert verify_preserved(text("a", "b"), b"", text("b")).readded == [(2, "b")]


# --- merge3 results always verify ------------------------------------------------------------

# Few distinct lines (blank ones included) make the diffs' choices ambiguous: the hard case.
LINES = st.sampled_from(["a", "b", "c", "", "}"])


@st.composite
def edited(draw: st.DrawFn, base: list[str]) -> list[str]:
    lines = list(base)
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(lines)))
        new = draw(st.lists(LINES, max_size=3))
        lines[at : at + draw(st.integers(0, 3))] = new
    return lines


@st.composite
def merges(draw: st.DrawFn) -> tuple[bytes, bytes, bytes]:
    base = draw(st.lists(LINES, max_size=14))
    ours, theirs = draw(edited(base)), draw(edited(base))
    newline = [draw(st.booleans()) for _ in range(3)]
    return (
        text(*base, eol=newline[0]),
        text(*ours, eol=newline[1]),
        text(*theirs, eol=newline[2]),
    )


@settings(max_examples=250, deadline=None)
@given(case=merges())
def test_merge3_results_always_verify(case: tuple[bytes, bytes, bytes]) -> None:
    base, ours, theirs = case
    merged = merge3(base, ours, theirs)
    assert verify_preserved(base, ours, merged.merged) == VerifyResult(True, [], [])


@settings(max_examples=100, deadline=None)
@given(case=merges(), data=st.data())
def test_dropping_a_distinct_adopter_line_is_always_caught(
    case: tuple[bytes, bytes, bytes], data: st.DataObject
) -> None:
    base, ours, theirs = case
    marker = "adopter line 1"
    lines = ours.decode().splitlines()
    at = data.draw(st.integers(0, len(lines)))
    ours = text(*lines[:at], marker, *lines[at:])
    merged = merge3(base, ours, theirs).merged
    kept = merged.decode().splitlines()
    if marker in kept:
        kept.remove(marker)
        verdict = verify_preserved(base, ours, text(*kept))
        assert (at + 1, marker) in verdict.missing


# --- the command -----------------------------------------------------------------------------


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    verify_cmd.add_arguments(parser)
    return verify_cmd.run(parser.parse_args(list(argv)))


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    paths = {}
    contents = {
        "base": text(*AGENT),
        "ours": text("name: reviewer", "model: opus", *AGENT[2:]),
        "good": text("name: reviewer", "model: opus", "tools: read, grep", "", "Review it."),
        "bad": text(*AGENT),
    }
    for name, data in contents.items():
        path = tmp_path / name
        path.write_bytes(data)
        paths[name] = str(path)
    return paths


def test_cli_preserved(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code = run_cli(
        "--baseline", files["base"], "--current", files["ours"], "--result", files["good"]
    )
    assert code == 0
    assert capsys.readouterr().out.startswith("preserved")


def test_cli_reports_missing_lines(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_cli(
        "--baseline", files["base"], "--current", files["ours"], "--result", files["bad"]
    )
    assert code == 3  # found something; 1 stays "could not check"
    out = capsys.readouterr().out
    assert "2: model: opus" in out
    assert "2: model: sonnet" in out


def test_cli_json(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    args = (
        "--baseline",
        files["base"],
        "--current",
        files["ours"],
        "--result",
        files["bad"],
        "--json",
    )
    assert run_cli(*args) == 3
    assert json.loads(capsys.readouterr().out) == {
        "schema_version": 1,
        "preserved": False,
        "missing": [{"line": 2, "text": "model: opus"}],
        "readded": [{"line": 2, "text": "model: sonnet"}],
    }


def test_cli_names_an_unreadable_file(files: dict[str, str], tmp_path: Path) -> None:
    missing = str(tmp_path / "nope")
    with pytest.raises(TetherError) as missing_result:
        run_cli("--baseline", files["base"], "--current", files["ours"], "--result", missing)
    assert str(missing_result.value) == (
        f"{missing}: cannot read the result file (No such file or directory)"
    )
    with pytest.raises(TetherError) as folder_as_baseline:
        run_cli("--baseline", str(tmp_path), "--current", files["ours"], "--result", files["good"])
    assert str(folder_as_baseline.value) == (
        f"{tmp_path}: cannot read the baseline file (Is a directory)"
    )


def test_tether_verify_end_to_end(
    files: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["verify", "--baseline", files["base"], "--current", files["ours"]]
    assert main([*common, "--result", files["good"]]) == 0
    assert capsys.readouterr().out.startswith("preserved")
    assert main([*common, "--result", files["bad"], "--json"]) == 3
    assert json.loads(capsys.readouterr().out)["missing"] == [{"line": 2, "text": "model: opus"}]
    assert main([*common, "--result", str(tmp_path / "nope")]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1
    assert "nope" in error
