"""`tether region-compare`, run through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether.cli import main as cli_main

S = "<!-- gaia:audit-remit:start -->"
E = "<!-- gaia:audit-remit:end -->"


def test_command_is_registered():
    assert "region-compare" in cli_main.COMMANDS


def write(tmp_path: Path, name: str, *lines: str) -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines))
    return path


def args(b: Path, latest: Path, a: Path, *extra: str, start: str = S, end: str = E) -> list[str]:
    return [
        "region-compare",
        "--baseline",
        str(b),
        "--latest",
        str(latest),
        "--current",
        str(a),
        "--start-marker",
        start,
        "--end-marker",
        end,
        *extra,
    ]


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    b = write(tmp_path, "b.md", "# A", S, "- `a/**`", E)
    latest = write(tmp_path, "l.md", "# A", S, "- `up/**`", E)
    a = write(tmp_path, "a.md", "# A", S, "- `mine/**`", E)
    return b, latest, a


def test_json_document(files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main.main(args(*files, "--json")) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["verdict"] == "no-upstream-change"
    assert document["markers"] == {
        "bailed": False,
        "baseline": {"scan": "region", "masked": True},
        "latest": {"scan": "region", "masked": True},
        "current": {"scan": "region", "masked": True},
    }
    assert "mine" not in document["normalized"]["current"]


def test_human_summary(files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main.main(args(*files)) == 0
    out = capsys.readouterr().out
    assert out.startswith("no-upstream-change:")
    assert "current: region at lines 2-4, masked" in out


def test_conflict_still_exits_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = write(tmp_path, "b.md", "one", S, E)
    latest = write(tmp_path, "l.md", "two", S, E)
    a = write(tmp_path, "a.md", "three", S, S, E)
    assert cli_main.main(args(b, latest, a, "--json")) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["verdict"] == "conflict"
    assert document["markers"]["bailed"] is True
    assert document["markers"]["current"]["detail"] == "duplicate-start"


def test_missing_file_exits_1(
    files: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    b, latest, _ = files
    missing = tmp_path / "nope.md"
    assert cli_main.main(args(b, latest, missing)) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "--current" in captured.err and "nope.md" in captured.err
    assert len(captured.err.strip().splitlines()) == 1


def test_directory_is_unreadable_exits_1(
    files: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, latest, a = files
    assert cli_main.main(args(tmp_path, latest, a)) == 1
    assert "--baseline" in capsys.readouterr().err


@pytest.mark.parametrize(("start", "end"), [("  ", E), (S, ""), (S, S)])
def test_blank_or_equal_marker_exits_2(
    files: tuple[Path, Path, Path], start: str, end: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main.main(args(*files, start=start, end=end)) == 2
    assert "marker" in capsys.readouterr().err
