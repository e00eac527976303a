"""Deep mode's deterministic parts: the deduplicated bump list, groups by scope and override
family, the PR buckets of a major update, the classification of a subset, the reading of
tags, changelogs and repository fields, and ``tether deps dossier`` writing its skeleton
from a plan folder (never over a filled one).

The ``deps dossier`` tests plan against a loopback registry on 127.0.0.1 that also stands in
for GitHub's REST API (fixtures/deps/deep.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from builders import schema_validator
from fixtures.deps.deep import PACKUMENTS, PAGES, deep_world
from fixtures.deps.kit import run_cli, run_json, setup_cli
from fixtures.deps.loopback import LoopbackRegistry
from tether.deps.bumps import (
    BumpItem,
    Together,
    bucket_counts,
    bump_list,
    classify,
    groups,
    pr_buckets,
)
from tether.deps.dossier import improvements
from tether.deps.notes import (
    Unreadable,
    changelog_sections,
    github_repo,
    registry_part,
    tag_version,
)
from tether.report.dossier import together_reason

# --- the bump list --------------------------------------------------------------------------


def occurrence(
    project: str, current: str, effective: str, location: str = "dependencies"
) -> dict[str, Any]:
    return {
        "project_name": project,
        "current_version": current,
        "target_version": effective,
        "effective_target": effective,
        "location": location,
        "source_file": "package.json",
    }


def package(name: str, *occurrences: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": name, "ecosystem": "npm", "occurrences": list(occurrences), **extra}


def test_bump_list_is_deduplicated_alphabetical_with_the_most_common_current() -> None:
    plan = {
        "level": "major",
        "packages": [
            package(
                "zod",
                occurrence("a", "^3.1.0", "^3.5.0"),
                occurrence("b", "~3.2.0", "~3.5.0"),
                occurrence("c", "~3.2.0", "~3.5.0"),
                occurrence("d", "^3.5.0", "^3.5.0"),  # already there: not counted
            ),
            package("left", occurrence("a", "^1.0.0", "^2.0.0"), skipped_by="conflict-policy"),
            package("react", occurrence("a", "^18.2.0", "^19.1.0"), catalog="react18"),
            package(
                "react",
                occurrence("b", "^17.0.0", "^17.0.2"),
                occurrence("a", "^18.0.0", "^19.1.0"),
                occurrence("c", "^17.0.0", "^17.0.2"),
            ),
        ],
        "overrides": [{"id": "zod-family", "packages": ["zod"]}],
    }
    items = bump_list(plan)
    assert [i.label for i in items] == ["react", "react (catalog react18)", "zod"]
    react, _, zod = items
    # Two of three projects declare ^17.0.0; notes start at the lowest current version and
    # end at the highest target.
    assert (react.current_version, react.target_version) == ("^17.0.0", "^19.1.0")
    assert (react.from_version, react.to_version) == ("17.0.0", "19.1.0")
    assert react.projects == ("b", "a", "c") and react.breaking
    assert zod.current_version == "~3.2.0"  # most common (2 of 3 moving), not the first
    assert (zod.from_version, zod.to_version, zod.breaking) == ("3.1.0", "3.5.0", False)
    assert zod.override == "zod-family" and react.override is None


def item(name: str, old: str, new: str, override: str | None = None) -> BumpItem:
    return BumpItem(
        name, "npm", None, f"^{old}", f"^{new}", old, new, ("p",), ("dependencies",), override
    )


def test_groups_by_override_family_then_scope_then_alone() -> None:
    items = [
        item("@babel/core", "7.1.0", "7.2.0"),
        item("@babel/preset-env", "7.1.0", "7.2.0"),
        item("@storybook/react", "7.0.0", "8.0.0", "storybook"),
        item("storybook", "7.0.0", "8.0.0", "storybook"),
        item("lodash", "4.17.20", "4.17.21"),
    ]
    assert [(g.id, g.kind, g.packages) for g in groups(items)] == [
        ("override:storybook", "override-family", ("@storybook/react", "storybook")),
        ("scope:@babel", "scope", ("@babel/core", "@babel/preset-env")),
        ("package:lodash", "package", ("lodash",)),
    ]


def test_pr_buckets_keep_families_and_peer_groups_together() -> None:
    items = [
        item("@storybook/addon", "7.6.0", "7.6.9", "storybook"),  # no major of its own…
        item("storybook", "7.6.0", "8.1.0", "storybook"),  # …but its family's is
        item("eslint", "8.57.0", "9.4.0"),
        item("eslint-plugin-x", "2.1.0", "2.3.0"),  # names eslint as a peer: goes with it
        item("lodash", "4.17.20", "4.17.21"),
        item("zod", "3.22.0", "3.23.0"),
        item("tiny", "0.3.0", "0.4.0"),  # 0.x: a new minor breaks
    ]
    peers = {("npm", "eslint-plugin-x"): ["eslint", "not-bumped"], ("npm", "zod"): []}
    buckets = pr_buckets(items, peers)
    assert [(b.id, b.breaking, b.packages) for b in buckets] == [
        ("pr-1", False, ("lodash", "zod")),
        ("pr-2", True, ("@storybook/addon", "storybook")),
        ("pr-3", True, ("eslint", "eslint-plugin-x")),
        ("pr-4", True, ("tiny",)),
    ]
    assert buckets[1].together == (Together("override", family="storybook"),)
    assert buckets[2].together == (Together("peer", "eslint-plugin-x", "2.3.0", peer="eslint"),)
    # The facts are worded in report/ (the dossier's words).
    assert buckets[1].to_json(together_reason)["together"] == ["override family storybook"]
    assert buckets[2].to_json(together_reason)["together"] == [
        "eslint-plugin-x 2.3.0 names eslint as a peer"
    ]
    assert bucket_counts(buckets) == {
        "buckets": 4,
        "breaking": 3,
        "non_breaking": 1,
        "kept_together_by_override": 1,
        "kept_together_by_peers": 1,
    }


def test_a_subset_names_bumps_exactly_and_improvements_by_any_part() -> None:
    titles = ["React: adopt the compiler", "Drop the lodash polyfill"]
    picked = classify(
        ["react-dom", "COMPILER", "React", "nothing", "lodash"],
        ["react", "react-dom", "lodash"],
        titles,
    )
    assert picked.bumps == ("react-dom", "lodash")  # "React" is not the bump "react"
    assert picked.improvements == ("React: adopt the compiler", "Drop the lodash polyfill")
    assert picked.unmatched == ("nothing",)


def test_engines_read_their_known_repositories() -> None:
    node = BumpItem("node", "engine", None, "20", "22", "20.0.0", "22.0.0", ("p",), (".nvmrc",))
    notes = registry_part(node, None)
    assert notes.repository == "https://github.com/nodejs/node"
    assert notes.unavailable == [
        "the plan folder holds no registry metadata for it (deps plan keeps it)"
    ]
    engines = {
        "level": "engines",
        "packages": [
            {
                "name": "node",
                "ecosystem": "engine",
                "occurrences": [occurrence("p", "20", "22", ".nvmrc")],
            }
        ],
    }
    assert bump_list(engines)[0].from_version == "20.0.0"  # fewer parts read as .0.0


# --- reading tags, changelogs, repositories and the filled dossier ----------------------------


@pytest.mark.parametrize(
    ("tag", "name", "expected"),
    [
        ("v19.1.0", "react", ("19.1.0", False)),
        ("19.1.0", "react", ("19.1.0", False)),
        ("react-dom@19.1.0", "react-dom", ("19.1.0", True)),
        ("@babel/core@7.2.0", "@babel/core", ("7.2.0", True)),
        ("core@7.2.0", "@babel/core", ("7.2.0", True)),
        ("bun-v1.1.3", "bun", ("1.1.3", True)),
        ("react-dom@19.1.0", "react", None),  # another package of the monorepo
        ("nightly", "react", None),
    ],
)
def test_release_tags_name_versions(tag: str, name: str, expected: tuple[str, bool] | None) -> None:
    assert tag_version(tag, name, "npm") == expected


@pytest.mark.parametrize(
    ("url", "slug"),
    [
        ("git+https://github.com/facebook/react.git", "facebook/react"),
        ("https://github.com/o/r/tree/main/packages/x", "o/r"),
        ("git@github.com:o/r.git", "o/r"),
        ("git+ssh://git@github.com/o/r.git", "o/r"),
        ("https://user:secret@github.com/o/r", "o/r"),
        ("github:o/r", "o/r"),
        ("o/r", "o/r"),
        ("https://gitlab.com/o/r", None),
        ("bitbucket:o/r", None),
        ("", None),
    ],
)
def test_repository_fields_name_github_repositories(url: str, slug: str | None) -> None:
    repo = github_repo(url)
    assert (repo.slug if repo else None) == slug


def test_changelogs_are_cut_at_their_version_headings() -> None:
    text = (
        "# Changelog\n\nIntro.\n\n## v2.0.0 (2025-01-02)\n### Breaking\n- dropped node 16\n"
        "## 1.9.1\n- fix\n\n# Older\n- noise\n"
    )
    sections = changelog_sections(text, "npm")
    assert [(s["version"], s["heading"], s["body"]) for s in sections] == [
        ("2.0.0", "v2.0.0 (2025-01-02)", "### Breaking\n- dropped node 16"),
        ("1.9.1", "1.9.1", "- fix"),
    ]
    with pytest.raises(Unreadable, match="no heading names a version"):
        changelog_sections("# Notes\nnothing here\n", "npm")


def test_improvements_are_the_bullets_under_their_heading() -> None:
    text = (
        "# Dependency dossier\n\n## Improvements\n\n<!-- to fill: - <title> (group: g) -->\n"
        "_none yet_\n- React: use the compiler (group: package:react; affects: web, shop)\n"
        "  - a detail, not an improvement\n* Drop a polyfill\n\n## Workarounds resolved\n"
        "- not an improvement\n"
    )
    found = improvements(text)
    assert [(i.title, i.group, i.projects) for i in found] == [
        ("React: use the compiler", "package:react", ("web", "shop")),
        ("Drop a polyfill", None, ()),
    ]


# --- tether deps dossier ----------------------------------------------------------------------


SERVED = {"packuments": PACKUMENTS, "pages": dict(PAGES)}  # what the registry serves (conftest.py)


def deep_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry, level: str
) -> Path:
    setup_cli(monkeypatch, tmp_path)
    world = deep_world(tmp_path)
    code, doc = run_json("deps", "plan", "--level", level, "--registry", str(world),
                         "--npm-registry", server.url, "--deep")  # fmt: skip
    assert code == 0, doc
    return Path(doc["plan_dir"])


def test_the_dossier_skeleton_comes_from_the_plan_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    folder = deep_plan(tmp_path, monkeypatch, server, "major")
    assert run_json("deps", "notes", "--level", "major", "--github-api", server.url,
                    "--retries", "0")[0] == 0  # fmt: skip
    before = server.total
    code, doc = run_json("deps", "dossier", "--level", "major")
    assert code == 0
    assert server.total == before  # asks no server
    bumps = {b["name"]: b for b in doc["bumps"]}
    assert list(bumps) == sorted(bumps)
    assert bumps["react"]["current_version"] == "^18.2.0"  # web and shop; api has ~18.3.1
    assert bumps["react"]["projects"] == ["web", "api", "shop"]
    assert bumps["@scope/two"]["group"] == "scope:@scope"
    assert ["scope:@scope", ("@scope/one", "@scope/two")] in [
        [g["id"], tuple(g["packages"])] for g in doc["groups"]
    ]
    buckets = doc["pr_plan"]["buckets"]
    assert [(b["breaking"], b["packages"]) for b in buckets] == [
        (False, ["@scope/one", "@scope/two", "bad-log", "flaky", "gone-repo", "lodashy"]),
        (True, ["react", "react-dom"]),
    ]
    assert buckets[1]["together"] == ["react-dom 19.1.0 names react as a peer"]
    notes = {n["name"]: n for n in doc["notes"]}
    assert notes["flaky"]["status"] == "not-fetched"  # its release pages answered 500
    assert [e["version"] for e in notes["react"]["entries"]] == [
        "18.3.0",
        "18.3.1",
        "19.0.0",
        "19.1.0",
    ]
    assert notes["react"]["deprecated"][0]["version"] == "18.3.0"
    assert {
        "package": "gone-repo",
        "reason": "release pages: no repository acme/gone on GitHub",
    } in doc["unavailable"]
    text = (folder / "dossier.md").read_text()
    headings = ["Breaking changes and migration", "Improvements", "Workarounds resolved"]
    headings += ["Unavailable", "Bump set", "Groups", "PR plan", "Release notes"]
    for heading in headings:
        assert f"\n## {heading}\n" in text, heading
    assert text.index("## Breaking changes") < text.index("## Improvements")
    assert "| react (breaking) | ^18.2.0 | ^19.1.0 | web, api, shop | `package:react` |" in text
    assert "2. `pr-2` (breaking): react, react-dom" in text
    assert "- 18.3.0 is deprecated: use 18.3.1" in text
    assert improvements(text) == []  # the skeleton offers nothing to select yet
    kept = json.loads((folder / "dossier.json").read_text())
    assert kept["bumps"] == doc["bumps"] and kept["schema_version"] == 1
    schema_validator("deps-dossier").validate(kept)


def test_a_filled_dossier_is_never_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    folder = deep_plan(tmp_path, monkeypatch, server, "minor")
    assert run_cli("deps", "dossier", "--plan-dir", str(folder))[0] == 0
    assert run_cli("deps", "dossier", "--plan-dir", str(folder))[0] == 0  # untouched: rewritten
    md = folder / "dossier.md"
    filled = md.read_text().replace("_none yet_", "- Drop the polyfill (affects: web)", 1)
    md.write_text(filled)
    code, out, err = run_cli("deps", "dossier", "--plan-dir", str(folder))
    assert code == 1 and out == ""
    assert err == (
        f"tether: {md} was edited since tether wrote it (it may hold research): move it "
        "away to write a new skeleton (nothing was written)\n"
    )
    assert md.read_text() == filled
    text = filled
    assert "## PR plan" not in text and "## Breaking changes" not in text  # major only
