"""The text of ``tether deps plan``: the bump-set table (alphabetical rows, project names
capped with "+N more", locations, split targets under a conflict policy) and the
conflict-policy lines naming the packages and projects, over real project folders and a
loopback registry."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.deps.kit import project, registry_file, run_cli, setup_cli
from fixtures.deps.loopback import LoopbackRegistry


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackRegistry]:
    with LoopbackRegistry() as registry:
        yield registry


@pytest.fixture
def seven(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """p1 pins alpha 1.2.0 (patch target 1.2.3); p2–p6 take ^1.0.0 (admits 1.2.3); p7's
    ~1.0.1 cannot. gamma comes first in p1's manifest, so first-occurrence order is not
    alphabetical."""
    setup_cli(monkeypatch, tmp_path)
    specs: dict[str, dict[str, dict[str, str]]] = {
        "p1": {"dependencies": {"gamma": "^4.1.0", "alpha": "1.2.0"}},
        "p2": {"dependencies": {"alpha": "^1.0.0"}, "devDependencies": {"gamma": "^4.0.0"}},
    }
    for name in ("p3", "p4", "p5", "p6"):
        specs[name] = {"dependencies": {"alpha": "^1.0.0"}}
    specs["p7"] = {"dependencies": {"alpha": "~1.0.1"}}
    roots = {
        name: project(
            tmp_path / name,
            {"package.json": {"name": name, **sections}, "package-lock.json": {}},
        )
        for name, sections in specs.items()
    }
    return registry_file(tmp_path / "projects.json", roots)


def plan_text(registry: Path, server: LoopbackRegistry, policy: str) -> str:
    code, out, err = run_cli(
        "deps",
        "plan",
        "--level",
        "patch",
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
    assert alpha[1] == "1.2.3 / ~1.0.5 (p7)"
    assert "* per-project targets under the conflict policy" in text
    assert gamma == ["gamma", "^4.1.1", "p1, p2", "dependencies, devDependencies"]


def test_conflict_policy_line_names_packages_and_projects(
    seven: Path, server: LoopbackRegistry
) -> None:
    text = plan_text(seven, server, "use-max-where-possible")
    assert "Conflict policy: use-max-where-possible, for 1 conflicting package(s):" in text
    # p2–p7 have lower own targets (^1.0.5, ~1.0.5); p1's own target is the maximum.
    assert (
        "- alpha in p1, p2, p3, p4, p5 +2 more: own target below 1.2.3 in p2, p3, p4, p5, p6 "
        "+1 more"
    ) in text.splitlines()


def test_per_project_policy_shows_every_target(seven: Path, server: LoopbackRegistry) -> None:
    alpha = rows(plan_text(seven, server, "per-project"))[1]
    assert alpha[0] == "alpha *"
    assert alpha[1] == "1.2.3 / ^1.0.5 (p2, p3, p4, p5, p6) / ~1.0.5 (p7)"


def test_skip_package_moves_the_package_out_of_the_table(
    seven: Path, server: LoopbackRegistry
) -> None:
    text = plan_text(seven, server, "skip-package")
    assert [r[0] for r in rows(text)[1:]] == ["gamma"]
    assert "## Skipped by conflict policy (1)" in text
    assert "- alpha → 1.2.3 (projects p1, p2, p3, p4, p5 +2 more)" in text
    assert "* per-project" not in text
