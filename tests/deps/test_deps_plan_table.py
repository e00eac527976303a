"""The text of ``tether deps plan``: the bump-set table (alphabetical rows, project names
capped with "+N more", locations, split targets under a conflict policy) and the
conflict-policy lines naming the packages and projects, over real project folders and a
loopback registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixtures.deps.kit import project, registry_file, run_cli, setup_cli
from fixtures.deps.loopback import LoopbackRegistry
from tether.report.deps import SPLIT_NOTE


@pytest.fixture
def seven(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """p1 pins alpha 2.1.0 (minor target 2.2.0); p2–p6 take ^2.0.0 (own target ^2.2.0); p7's
    week-long release-age gate keeps it at ~2.1.0 (2.2.0 is two days old). gamma comes first
    in p1's manifest, so first-occurrence order is not alphabetical."""
    setup_cli(monkeypatch, tmp_path)
    specs: dict[str, dict[str, dict[str, str]]] = {
        "p1": {"dependencies": {"gamma": "^4.1.0", "alpha": "2.1.0"}},
        "p2": {"dependencies": {"alpha": "^2.0.0"}, "devDependencies": {"gamma": "^4.0.0"}},
    }
    for name in ("p3", "p4", "p5", "p6"):
        specs[name] = {"dependencies": {"alpha": "^2.0.0"}}
    specs["p7"] = {"dependencies": {"alpha": "~2.0.0"}}
    roots = {
        name: project(
            tmp_path / name,
            {"package.json": {"name": name, **sections}, "package-lock.json": {}},
        )
        for name, sections in specs.items()
    }
    (roots["p7"] / ".npmrc").write_text("min-release-age=7\n")
    return registry_file(tmp_path / "projects.json", roots)


def plan_text(registry: Path, server: LoopbackRegistry, policy: str, level: str = "minor") -> str:
    code, out, err = run_cli(
        "deps",
        "plan",
        "--level",
        level,
        "--conflict-policy",
        policy,
        "--registry",
        str(registry),
        "--npm-registry",
        server.url,
    )
    assert code == 0, err
    return out


def rows(text: str) -> list[list[str]]:
    table = [line for line in text.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in table]


def test_rows_are_alphabetical_with_capped_projects_and_locations(
    seven: Path, server: LoopbackRegistry
) -> None:
    text = plan_text(seven, server, "use-max-where-possible")
    header, *body = rows(text)
    assert header == ["package", "proposed target", "projects", "locations"]
    assert [r[0] for r in body] == ["alpha *", "gamma"]
    alpha, gamma = body
    assert alpha[2] == "p1, p2, p3, p4, p5 +2 more"
    assert alpha[3] == "dependencies"
    # The split: the proposed target, then the version p7 keeps, with its project.
    assert alpha[1] == "2.2.0 / ~2.1.0 (p7)"
    assert f"* {SPLIT_NOTE}" in text
    assert gamma == ["gamma", "^4.1.1", "p1, p2", "dependencies, devDependencies"]


def test_conflict_policy_line_names_packages_and_projects(
    seven: Path, server: LoopbackRegistry
) -> None:
    text = plan_text(seven, server, "use-max-where-possible")
    assert "Conflict policy: use-max-where-possible, for 1 conflicting package(s):" in text
    # p7's gate keeps its own target lower; the others' own targets are the maximum.
    assert (
        "- alpha in p1, p2, p3, p4, p5 +2 more: own target below 2.2.0 in p7"
    ) in text.splitlines()


def test_per_project_policy_shows_every_target(seven: Path, server: LoopbackRegistry) -> None:
    alpha = rows(plan_text(seven, server, "per-project"))[1]
    assert alpha[0] == "alpha *"
    assert alpha[1] == "2.2.0 / ~2.1.0 (p7)"


def test_a_patch_run_splits_by_level_without_a_conflict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    """At patch each project stays on its own major.minor, so 1.0.x, 1.1.x and 1.2.x never
    meet: the row splits, with no conflict to decide."""
    setup_cli(monkeypatch, tmp_path)
    specs = {"q1": "1.2.0", "q2": "^1.0.0", "q3": "~1.1.0"}
    roots = {
        name: project(
            tmp_path / name,
            {"package.json": {"name": name, "dependencies": {"alpha": spec}}},
        )
        for name, spec in specs.items()
    }
    text = plan_text(
        registry_file(tmp_path / "projects.json", roots), server, "per-project", "patch"
    )
    assert "Conflict policy: per-project (no conflicting package)" in text
    assert rows(text)[1] == [
        "alpha *",
        "1.2.3 / ^1.0.5 (q2) / ~1.1.4 (q3)",
        "q1, q2, q3",
        "dependencies",
    ]
    assert f"* {SPLIT_NOTE}" in text


def test_skip_package_moves_the_package_out_of_the_table(
    seven: Path, server: LoopbackRegistry
) -> None:
    text = plan_text(seven, server, "skip-package")
    assert [r[0] for r in rows(text)[1:]] == ["gamma"]
    assert "## Skipped by conflict policy (1)" in text
    assert "- alpha → 2.2.0 (projects p1, p2, p3, p4, p5 +2 more)" in text
    assert SPLIT_NOTE not in text
