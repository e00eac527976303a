"""``tether deps plan --deep`` and ``tether deps notes``: plan folders and their pruning, and
release notes from the registry's metadata and the repositories' release pages, kept in the
plan folder so a second run asks nothing.

One real HTTP server on 127.0.0.1 (``LoopbackRegistry``) stands in for the npm registry and
for GitHub's REST API (``--github-api`` points at it); nothing else is contacted.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from fixtures.deps.deep import FLAKY, PACKUMENTS, PAGES
from fixtures.deps.kit import NOW, run_cli, run_json
from fixtures.deps.loopback import LoopbackRegistry

SERVED = {"packuments": PACKUMENTS, "pages": dict(PAGES)}  # what the registry serves (conftest.py)


@pytest.fixture
def world(world: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The area's deep scenario (conftest.py), with no GitHub token and no API address set."""
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_API_URL", raising=False)
    return world


def plan_deep(world: Path, server: LoopbackRegistry, *extra: str) -> dict[str, Any]:
    args = ("deps", "plan", "--level", "major", "--registry", str(world))
    code, doc = run_json(*args, "--npm-registry", server.url, *extra)
    assert code == 0, doc
    return doc


def notes(server: LoopbackRegistry, *args: str) -> tuple[int, dict[str, Any]]:
    return run_json("deps", "notes", "--github-api", server.url, "--retries", "0", *args)


def entry(doc: dict[str, Any], name: str) -> dict[str, Any]:
    found = [p for p in doc["packages"] if p["name"] == name]
    assert len(found) == 1, doc["packages"]
    return dict(found[0])


# --- plan folders ---------------------------------------------------------------------------


def test_deep_plan_keeps_the_plan_and_its_registry_metadata(
    world: Path, server: LoopbackRegistry, tmp_path: Path
) -> None:
    doc = plan_deep(world, server, "--deep")
    folder = Path(doc["plan_dir"])
    assert folder.parent == tmp_path / "state" / "tether" / "plans"
    assert folder.name == "deps-major-20250601-000000"  # named by the (test) clock
    assert {"cross-project-plan.json", "scan-by-project.json", "package-metadata.json"} <= {
        p.name for p in folder.iterdir()
    }
    metadata = json.loads((folder / "package-metadata.json").read_text())
    react = next(p for p in metadata["packages"] if p["name"] == "react")
    assert react["repository"] == "git+https://github.com/facebook/react.git"
    assert react["directory"] == "packages/react"
    # Every release between the lowest current version (18.2.0) and the target, oldest first.
    assert [r["version"] for r in react["releases"]] == ["18.3.0", "18.3.1", "19.0.0", "19.1.0"]
    assert react["releases"][0]["note"].startswith("use 18.3.1")
    dom = next(p for p in metadata["packages"] if p["name"] == "react-dom")
    assert dom["releases"][-1]["peers"] == ["react"]
    # Without --deep or --plan-dir the plan writes nothing.
    again = plan_deep(world, server)
    assert again["plan_dir"] is None
    assert len(list(folder.parent.iterdir())) == 1


def make_plan_folder(home: Path, name: str, days_unused: float, marked: bool = True) -> Path:
    folder = home / name
    folder.mkdir(parents=True)
    (folder / "cross-project-plan.json").write_text("{}\n")
    if marked:
        marker = folder / ".tether-plan"
        marker.write_text("{}\n")
        stamp = (NOW - timedelta(days=days_unused)).timestamp()
        os.utime(marker, (stamp, stamp))
    return folder


def test_writing_a_plan_removes_plan_folders_unused_for_ten_days(
    world: Path, server: LoopbackRegistry, tmp_path: Path
) -> None:
    home = tmp_path / "state" / "tether" / "plans"
    stale = make_plan_folder(home, "deps-minor-20250501-000000", 11)
    fresh = make_plan_folder(home, "deps-minor-20250525-000000", 9)
    unmarked = make_plan_folder(home, "notes-of-mine", 40, marked=False)
    in_use = make_plan_folder(home, "deps-major-20250401-000000", 60)
    doc = plan_deep(world, server, "--plan-dir", str(in_use))
    assert [p["plan_dir"] for p in doc["pruned_plan_folders"]] == [str(stale)]
    assert doc["pruned_plan_folders"][0]["last_used"].startswith("2025-05-21")
    assert f"removed plan folder {stale}: unused since 2025-05-21 (over 10 days)" in doc["warnings"]
    assert not stale.exists()
    assert fresh.is_dir() and unmarked.is_dir()
    assert (in_use / "package-metadata.json").is_file()  # in use: written, never removed
    code, out, _ = run_cli(
        "deps", "plan", "--level", "major", "--registry", str(world), "--npm-registry",
        server.url, "--deep",
    )  # fmt: skip
    assert code == 0 and "Plan folder: " in out
    assert in_use.is_dir()  # just used, so no longer stale


# --- release notes ----------------------------------------------------------------------------


def test_notes_come_from_the_registry_and_the_release_pages(
    world: Path, server: LoopbackRegistry
) -> None:
    folder = Path(plan_deep(world, server, "--deep")["plan_dir"])
    code, doc = notes(server, "--level", "major")
    assert code == 0, doc
    assert doc["plan_dir"] == str(folder)
    names = [p["name"] for p in doc["packages"]]
    assert names == sorted(names)  # the deduplicated bump list, alphabetical
    react = entry(doc, "react")
    assert (react["from_version"], react["to_version"]) == ("18.2.0", "19.1.0")
    assert react["repository"] == "https://github.com/facebook/react"
    assert [r["version"] for r in react["registry"]] == ["18.3.0", "18.3.1", "19.0.0", "19.1.0"]
    assert react["registry"][0]["deprecated"].startswith("use 18.3.1")
    assert react["registry"][1]["deprecated"] is None
    # Releases in (18.2.0, 19.1.0]: no draft, no prerelease, no release outside the range.
    assert [r["version"] for r in react["releases"]] == ["18.3.0", "18.3.1", "19.0.0", "19.1.0"]
    assert react["releases"][-1]["title"] == "19.1.0 (March 28, 2025)"
    assert react["releases"][-1]["url"].endswith("/releases/tag/v19.1.0")
    assert "body" not in react["releases"][0]  # the document stays small; the file has them
    kept = json.loads((folder / react["file"]).read_text())
    assert kept["releases"][-1]["body"] == "Owner stack traces."
    # No release at all: the changelog, cut at its version headings.
    one = entry(doc, "@scope/one")
    assert one["releases"] == [] and one["changelog_file"] == "CHANGELOG.md"
    assert [(c["version"], c["heading"]) for c in one["changelog"]] == [
        ("1.1.0", "[1.1.0] - 2024-02-01"),
        ("1.2.0", "[1.2.0] - 2024-03-01"),
    ]
    body = json.loads((folder / one["file"]).read_text())["changelog"][1]["body"]
    assert body == "### Added\n- the `two` function"
    assert doc["counts"]["fetched"] == len(names) and doc["counts"]["from_cache"] == 0


def test_what_cannot_be_read_is_recorded_never_raised(
    world: Path, server: LoopbackRegistry
) -> None:
    folder = Path(plan_deep(world, server, "--deep")["plan_dir"])
    code, doc = notes(server, "--plan-dir", str(folder))
    assert code == 0
    assert entry(doc, "bad-log")["unavailable"] == [
        "changelog CHANGELOG.md: no heading names a version (malformed or unusual changelog)"
    ]
    assert entry(doc, "gone-repo")["unavailable"] == [
        "release pages: no repository acme/gone on GitHub"
    ]
    assert "is not on GitHub" in entry(doc, "lodashy")["unavailable"][0]
    flaky = entry(doc, "flaky")
    assert flaky["unavailable"][0].startswith("release pages of acme/flaky unreachable:")
    assert "HTTP 500" in flaky["unavailable"][0]
    # What a server answered is kept; what could not be asked is not.
    assert entry(doc, "bad-log")["kept"] and (folder / entry(doc, "bad-log")["file"]).is_file()
    assert not flaky["kept"] and not (folder / flaky["file"]).exists()
    assert doc["counts"]["not_kept"] == 1
    code, out, err = run_cli("deps", "notes", "--plan-dir", str(folder), "--retries", "0",
                             "--github-api", server.url)  # fmt: skip
    assert code == 0 and "Traceback" not in err
    assert "flaky 1.0.0 → 1.2.0: 2 version(s) on the registry; unavailable: release pages" in out
    server.pages[FLAKY] = 403  # GitHub's answer when the rate limit is spent
    try:
        flaky = entry(notes(server, "--plan-dir", str(folder))[1], "flaky")
    finally:
        server.pages[FLAKY] = PAGES[FLAKY]
    assert flaky["unavailable"][0].endswith(
        "HTTP 403 (GitHub's rate limit? $GITHUB_TOKEN raises it)"
    )


def test_a_second_run_reads_the_kept_notes_and_asks_nothing(
    world: Path, server: LoopbackRegistry
) -> None:
    folder = Path(plan_deep(world, server, "--deep")["plan_dir"])
    assert notes(server, "--plan-dir", str(folder))[0] == 0
    before = Counter(server.counts)
    code, doc = notes(server, "--plan-dir", str(folder))
    assert code == 0
    # Only the release pages that could not be asked last time are asked again; the
    # registry is not asked at all (its part was kept at plan time).
    assert server.counts - before == Counter({FLAKY: 1})
    assert {p["name"]: p["source"] for p in doc["packages"]} == {
        name: "fetched" if name == "flaky" else "cache" for name in PACKUMENTS
    }
    assert entry(doc, "react")["releases"][-1]["title"] == "19.1.0 (March 28, 2025)"
    server.pages[FLAKY] = []  # the server recovers: now the notes are kept
    try:
        code, doc = notes(server, "--plan-dir", str(folder))
        assert entry(doc, "flaky")["kept"] and doc["counts"]["not_kept"] == 0
        before = Counter(server.counts)
        assert notes(server, "--plan-dir", str(folder))[0] == 0
        assert server.counts == before
    finally:
        server.pages[FLAKY] = PAGES[FLAKY]


def test_the_token_goes_to_the_api_and_nowhere_else(
    world: Path, server: LoopbackRegistry, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = Path(plan_deep(world, server, "--deep")["plan_dir"])
    monkeypatch.setenv("GITHUB_TOKEN", "gh-T0KEN-secret")
    start = len(server.authorizations)
    code, out, err = run_cli("deps", "notes", "--plan-dir", str(folder), "--github-api",
                             server.url, "--retries", "0")  # fmt: skip
    assert code == 0
    assert "Bearer gh-T0KEN-secret" in server.authorizations[start:]
    json_code, doc = notes(server, "--plan-dir", str(folder))
    assert json_code == 0
    texts = [out, err, json.dumps(doc)]
    texts += [p.read_text() for p in (tmp_path / "state").rglob("*") if p.is_file()]
    assert not [t for t in texts if "T0KEN" in t]


def test_notes_need_a_plan_folder(world: Path, server: LoopbackRegistry, tmp_path: Path) -> None:
    code, out, err = run_cli("deps", "notes", "--level", "minor")
    assert code == 2 and out == ""
    assert "no plan folder for level minor" in err and "deps plan --level minor --deep" in err
    code, _, err = run_cli("deps", "notes")
    assert code == 2 and "--plan-dir DIR, or --level L" in err
    code, _, err = run_cli("deps", "notes", "--plan-dir", str(tmp_path / "nowhere"))
    assert code == 2 and "no such folder" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run_cli("deps", "dossier", "--plan-dir", str(empty))
    assert code == 1 and "no cross-project-plan.json here" in err
    (empty / "cross-project-plan.json").write_text('{"level": "major", "packages": [')
    code, _, err = run_cli("deps", "notes", "--plan-dir", str(empty))
    assert code == 1 and "not valid JSON" in err and err.count("\n") == 1
    (empty / "cross-project-plan.json").write_text('{"level": "major", "packages": [{"x": 1}]}')
    code, _, err = run_cli("deps", "notes", "--plan-dir", str(empty))
    assert code == 1 and "not a plan file: package 1 has no name" in err
    folder = Path(plan_deep(world, server, "--deep")["plan_dir"])
    code, _, err = run_cli("deps", "notes", "--plan-dir", str(folder), "--level", "minor")
    assert code == 2 and "keeps a major plan, not minor" in err
    assert "Traceback" not in err


def test_damaged_plan_folder_files_are_read_around_never_raised(
    world: Path, server: LoopbackRegistry
) -> None:
    folder = Path(plan_deep(world, server, "--deep")["plan_dir"])
    code, doc = notes(server, "--plan-dir", str(folder))
    react_file = folder / entry(doc, "react")["file"]
    kept = json.loads(react_file.read_text())
    react_file.write_text(json.dumps({**kept, "releases": [1, 2]}))  # edited by hand
    metadata = json.loads((folder / "package-metadata.json").read_text())
    for package in metadata["packages"]:
        if package["name"] == "react":
            package["releases"] = "oops"
    metadata["packages"].append({"name": 3})
    (folder / "package-metadata.json").write_text(json.dumps(metadata))
    code, out, err = run_cli("deps", "notes", "--plan-dir", str(folder), "--json",
                             "--github-api", server.url, "--retries", "0")  # fmt: skip
    assert code == 0 and "Traceback" not in err
    react = entry(json.loads(out), "react")
    assert react["source"] == "fetched"  # the damaged file is fetched again…
    assert react["registry"] == []  # …from a registry part that was damaged too
    assert [r["version"] for r in react["releases"]] == ["18.3.0", "18.3.1", "19.0.0", "19.1.0"]
    assert json.loads(react_file.read_text())["releases"][0]["version"] == "18.3.0"
