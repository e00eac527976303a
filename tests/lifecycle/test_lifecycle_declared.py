"""Lifecycle declarations written in ``tether.toml``, built into the manifest with
``manifest build`` and run by real updates of native projects: ownership hand-off,
template-installed files, notices gated on the tree before the update and post-update
writes, with dry runs and crashes."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from builders import call, git, run_forked, run_tether, schema_validator, tree_digest, write_files
from tests.lifecycle.builders import built_once
from tests.lifecycle.test_lifecycle_migrations import update
from tether.flows.update import PreparedUpdate, UpdateRequest, prepare_update
from tether.model.plan import FileAction, RowCode, RowWhy
from tether.state import crashpoint

CONFIG = """\
name = "acme-kit"
version_file = "VERSION"
default_class = "shared"
exclude = ["ci/audit.yml"]

[[ownership]]
paths = ["docs/brand.md", "docs/brand-rules.md"]
when = { file = "docs/brand.md", frontmatter = { settled = true } }

[[templates]]
target = "ci/audit.yml"
template = "templates/audit.yml.tmpl"
install = "if-present"
after_refresh = "ci/audit.yml was refreshed: expect one skipped CI run."

[[notices]]
id = "strict-mode"
when = { not = { file = "kit.cfg", matches = "^strict\\\\s*=" } }
text = "Strict mode is new: add 'strict = true' to kit.cfg to opt in."

[[post_update]]
file = "cache/kit-check.json"
set = { current = "{to_version}", has_update = false, outdated = 0 }
keep = ["drift"]
"""

V1 = {
    "VERSION": "1.0.0\n",
    "docs/brand.md": "---\nsettled: false\n---\nPick your colours.\n",
    "docs/brand-rules.md": "rules\n",
    "templates/audit.yml.tmpl": "runs-on: old\n",
    "app.txt": "app 1\n",
}
V2 = {
    **V1,
    "VERSION": "2.0.0\n",
    "docs/brand.md": "---\nsettled: false\n---\nPick your colours.\nNew hint.\n",
    "docs/brand-rules.md": "rules\nmore rules\n",
    "templates/audit.yml.tmpl": "runs-on: new\n",
    "app.txt": "app 2\n",
}


def publish(tmp_path: Path, files: dict[str, str], config: str = CONFIG) -> Path:
    """Build the release with ``manifest build`` in a real upstream repository and put it
    on the shelf as ``shelf/<version>``."""
    version = files["VERSION"].strip()
    repo = tmp_path / f"upstream-{version}"
    write_files(repo, {**files, "tether.toml": config})
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", version)
    assert call("manifest", "build", "-C", str(repo)) == 0
    shelf = tmp_path / "shelf"
    shutil.copytree(repo, shelf / version, ignore=shutil.ignore_patterns(".git", "tether.toml"))
    return shelf


def published_shelf(shelf: Path) -> None:
    """``shelf`` holding 1.0.0 and 2.0.0 as ``publish`` builds them (its upstream
    repositories in a scratch folder beside it, removed afterwards)."""
    scratch = shelf.with_name(f"{shelf.name}-upstream")
    publish(scratch, V1)
    publish(scratch, V2)
    shutil.move(scratch / "shelf", shelf)
    shutil.rmtree(scratch)


def project_at_v1(tmp_path: Path, mine: dict[str, str] | None = None) -> Path:
    # The same two releases every time: built with manifest build once per test process.
    shelf = built_once("declared-shelf", tmp_path / "shelf", published_shelf)
    project = tmp_path / "proj"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    assert call("init", "--source", str(shelf), "--to", "1.0.0", "-C", str(project)) == 0
    write_files(project, mine or {})
    git(project, "add", "-A")
    git(project, "commit", "-qm", "install")
    return project


# --- manifest build ------------------------------------------------------------------------


def test_manifest_build_carries_every_declaration(tmp_path):
    shelf = publish(tmp_path, V2)
    doc = json.loads((shelf / "2.0.0/.tether/manifest.json").read_text())
    assert "ci/audit.yml" not in doc["files"]
    assert doc["ownership"] == [
        {
            "paths": ["docs/brand.md", "docs/brand-rules.md"],
            "when": {"file": "docs/brand.md", "frontmatter": {"settled": "true"}},
            "treat_as": "adopter-owned",
        }
    ]
    assert doc["templates"][0]["template"] == "templates/audit.yml.tmpl"
    assert doc["notices"][0]["when"] == {"not": {"file": "kit.cfg", "matches": "^strict\\s*="}}
    assert doc["post_update"][0]["set"] == {
        "current": "{to_version}",
        "has_update": False,
        "outdated": 0,
    }
    repo = tmp_path / "upstream-2.0.0"
    assert call("manifest", "build", "--check", "-C", str(repo)) == 0


MIGRATION = (
    '\n[[migrations]]\nid = "m1"\nversion = "2.0.0"\nwhen = "after"\nrun = ["bash", "{op}"]\n'
)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            MIGRATION.format(op="bin/missing.sh"),
            "migrations[0] (m1): bin/missing.sh is not a shipped file",
        ),
        (
            MIGRATION.format(op="app.txt").replace('"after"', '"later"'),
            "'when' must be before or after",
        ),
        (
            MIGRATION.format(op="app.txt").replace('"bash"', '"/bin/sh"'),
            "is not a bare program name",
        ),
        (MIGRATION.format(op="app.txt") + 'summary_pattern = "("\n', "bad regular expression"),
        (
            MIGRATION.format(op="app.txt") + "exit = { ok = [0], conflict = [0] }\n",
            "exit code 0 is in two lists",
        ),
        (
            MIGRATION.format(op="app.txt") + MIGRATION.format(op="app.txt"),
            "id 'm1' is declared twice",
        ),
        (
            '\n[[templates]]\ntarget = "app.txt"\ntemplate = "templates/audit.yml.tmpl"\n',
            "app.txt is a shipped file",
        ),
        (
            '\n[[ownership]]\npaths = ["a"]\nwhen = { exists = "a" }\ntreat_as = "shared"\n',
            "must be 'adopter-owned'",
        ),
        (
            '\n[[notices]]\nid = "n"\nwhen = { exists = "a", file = "b" }\ntext = "t"\n',
            "'file' does not go with 'exists'",
        ),
        ('\n[[post_update]]\nfile = "../x.json"\nset = { a = 1 }\n', "post_update[1].file"),
    ],
)
def test_bad_declarations_are_refused_by_manifest_build(tmp_path, capsys, extra, message):
    repo = tmp_path / "upstream"
    write_files(repo, {**V2, "tether.toml": CONFIG + extra})
    assert call("manifest", "build", "-C", str(repo)) == 1
    err = capsys.readouterr().err
    assert message in err and "tether.toml" in err
    assert err.count("\n") == 1
    assert not (repo / ".tether/manifest.json").exists()
    assert call("manifest", "build", "--check", "-C", str(repo)) == 1


# --- ownership hand-off --------------------------------------------------------------------


SETTLED = "---\nsettled: true\n---\nTeal. Always teal.\n"


def test_settled_page_and_its_sibling_are_left_entirely_alone(tmp_path):
    project = project_at_v1(tmp_path, {"docs/brand.md": SETTLED, "docs/brand-rules.md": "ours\n"})
    code, doc = update(project)
    assert code == 0, doc
    assert (project / "docs/brand.md").read_text() == SETTLED
    assert (project / "docs/brand-rules.md").read_text() == "ours\n"
    assert {"docs/brand.md", "docs/brand-rules.md"} <= set(doc["buckets"]["skip"])
    assert not {"docs/brand.md", "docs/brand-rules.md"} & set(doc["backed_up"])
    assert not (project / ".tether/merge").exists()
    human = run_tether("update", "--dry-run", "--all", "-C", str(project))
    assert human.returncode == 0


def test_status_and_check_leave_a_handed_over_page_to_the_adopter(tmp_path):
    """The hand-off holds for status and check too: a settled page is the adopter's, so its
    edits are not drift (check stays 0); once unsettled, the same edit is reported again."""
    project = project_at_v1(tmp_path, {"docs/brand.md": SETTLED})
    doc = json.loads(run_tether("status", "--json", "-C", str(project)).stdout)
    assert doc["adopter_owned"] == ["docs/brand-rules.md", "docs/brand.md"]
    assert "docs/brand.md" not in doc["modified"]
    assert run_tether("check", "-C", str(project)).returncode == 0
    human = run_tether("status", "-C", str(project)).stdout
    assert "Handed over to you" in human and "docs/brand.md" in human
    (project / "docs/brand.md").write_text("---\nsettled: false\n---\nTeal.\n")
    doc = json.loads(run_tether("status", "--json", "-C", str(project)).stdout)
    assert doc["adopter_owned"] == []
    assert "docs/brand.md" in doc["modified"]


def test_unsettled_page_merges_as_usual(tmp_path):
    project = project_at_v1(tmp_path)
    code, doc = update(project)
    assert code == 0
    assert "docs/brand.md" in doc["buckets"]["update"]
    assert (project / "docs/brand.md").read_text().endswith("New hint.\n")
    assert (project / "docs/brand-rules.md").read_text() == "rules\nmore rules\n"


def planned_row(project: Path, path: str) -> FileAction:
    prepared = prepare_update(UpdateRequest(project))
    assert isinstance(prepared, PreparedUpdate), prepared
    [row] = [a for a in prepared.plan.actions if a.path == path]
    return row


def test_a_handed_over_row_carries_its_condition_as_a_fact(tmp_path):
    project = project_at_v1(tmp_path, {"docs/brand.md": SETTLED})
    row = planned_row(project, "docs/brand.md")
    assert row.why is not None and row.why.code is RowCode.HANDED_OVER and not row.reason
    assert row.why.detail == "docs/brand.md frontmatter has settled: true"
    human = run_tether("update", "--dry-run", "-C", str(project)).stdout
    assert f"  docs/brand.md (adopter-owned: {row.why.detail})\n" in human


# --- template-installed file -------------------------------------------------------------


@pytest.mark.parametrize(
    ("installed", "why"),
    [
        ("runs-on: old\n", RowWhy(RowCode.TEMPLATE_REFRESHED, path="templates/audit.yml.tmpl")),
        ("runs-on: self-hosted\n", RowWhy(RowCode.TEMPLATE_DIVERGED)),
        ("runs-on: new\n", RowWhy(RowCode.TEMPLATE_IN_SYNC)),
        (None, RowWhy(RowCode.TEMPLATE_NOT_INSTALLED)),
    ],
)
def test_a_template_installed_row_is_a_fact(tmp_path, installed, why):
    project = project_at_v1(tmp_path, {"ci/audit.yml": installed} if installed else {})
    row = planned_row(project, "ci/audit.yml")
    assert (row.why, row.reason) == (why, "")


@pytest.mark.parametrize(
    ("installed", "bucket", "after"),
    [
        ("runs-on: old\n", "update", "runs-on: new\n"),
        ("runs-on: self-hosted\n", "conflict", "runs-on: self-hosted\n"),
        ("runs-on: new\n", "skip", "runs-on: new\n"),
        (None, "skip", None),
    ],
)
def test_template_installed_file(tmp_path, installed, bucket, after):
    mine = {"ci/audit.yml": installed} if installed is not None else {}
    project = project_at_v1(tmp_path, mine)
    code, doc = update(project)
    assert code == (4 if bucket == "conflict" else 0), doc
    found = doc["buckets"][bucket]
    assert "ci/audit.yml" in (found if bucket != "conflict" else [c["path"] for c in found])
    target = project / "ci/audit.yml"
    assert (target.read_text() if target.exists() else None) == after
    if bucket == "update":
        assert "ci/audit.yml" in doc["backed_up"]
        assert {
            "id": "refreshed:ci/audit.yml",
            "text": "ci/audit.yml was refreshed: expect one skipped CI run.",
        } in doc["notices"]
    if bucket == "conflict":
        assert doc["buckets"]["conflict"][0]["artifact"] == ".tether/merge/ci/audit.yml.patch"
        assert "+runs-on: new" in (project / ".tether/merge/ci/audit.yml.patch").read_text()


def test_template_with_the_old_template_unavailable_is_a_conflict(tmp_path):
    project = project_at_v1(tmp_path, {"ci/audit.yml": "runs-on: old\n"})
    shutil.rmtree(project / ".tether/cache")  # the pristine copies of 1.0.0 are gone ...
    shutil.rmtree(tmp_path / "shelf/1.0.0")  # ... and so is the release
    code, doc = update(project)
    assert code == 4
    [conflict] = doc["buckets"]["conflict"]
    assert conflict["path"] == "ci/audit.yml"
    assert conflict["reason"] == (
        "template-installed; the installed release's template is unavailable"
    )
    assert (project / "ci/audit.yml").read_text() == "runs-on: old\n"


# --- notices ------------------------------------------------------------------------------


def test_notice_shows_when_the_condition_held_before_the_update(tmp_path):
    project = project_at_v1(tmp_path, {"kit.cfg": "loose = 1\n"})
    result = run_tether("update", "--yes", "--no-branch", "-C", str(project))
    assert result.returncode == 0
    assert "Notice: Strict mode is new: add 'strict = true' to kit.cfg to opt in." in result.stdout


def test_notice_is_silent_when_the_condition_did_not_hold(tmp_path):
    project = project_at_v1(tmp_path, {"kit.cfg": "strict = true\n"})
    code, doc = update(project)
    assert code == 0 and doc["notices"] == []


# --- post-update writes -------------------------------------------------------------------


def test_post_update_write_keeps_listed_keys_and_sets_the_rest(tmp_path):
    cache = {"current": "1.0.0", "has_update": True, "outdated": 2, "drift": [1], "x": 1}
    project = project_at_v1(tmp_path, {"cache/kit-check.json": json.dumps(cache)})
    code, doc = update(project)
    assert code == 0
    assert json.loads((project / "cache/kit-check.json").read_text()) == {
        "drift": [1],
        "current": "2.0.0",
        "has_update": False,
        "outdated": 0,
    }
    assert doc["post_update"] == [{"file": "cache/kit-check.json", "status": "written"}]


# --- dry run and crashes ------------------------------------------------------------------


def test_dry_run_plans_every_mechanism_and_writes_nothing(tmp_path):
    mine = {
        "docs/brand.md": SETTLED,
        "ci/audit.yml": "runs-on: old\n",
        "cache/kit-check.json": "{}",
    }
    project = project_at_v1(tmp_path, mine)
    before = tree_digest(project)
    code, doc = update(project, "--dry-run")
    assert code == 0
    assert {k: v for k, v in tree_digest(project).items() if not k.startswith(".tether/cache")} == {
        k: v for k, v in before.items() if not k.startswith(".tether/cache")
    }
    assert "docs/brand.md" in doc["buckets"]["skip"]
    assert "ci/audit.yml" in doc["buckets"]["update"]
    assert [n["id"] for n in doc["notices"]] == ["strict-mode", "refreshed:ci/audit.yml"]
    # Named before anything is written; nothing written.
    assert doc["post_update"] == [{"file": "cache/kit-check.json", "status": "planned"}]
    assert (project / "cache/kit-check.json").read_text() == "{}"


def crash(project: Path, point: str | None) -> subprocess.CompletedProcess[str]:
    return run_forked("update", "--yes", "--no-branch", "--json", "-C", str(project), crash=point)


def test_crash_after_the_state_keeps_the_post_update_write_done_before_it(tmp_path):
    """Post-update writes come before the new state (so an abandon can still put them
    back): a run killed after its state record has done them, and its rerun finishes."""
    project = project_at_v1(tmp_path, {"cache/kit-check.json": "{}"})
    assert crash(project, "state-written:1").returncode == crashpoint.EXIT_CODE
    assert json.loads((project / "cache/kit-check.json").read_text())["current"] == "2.0.0"
    rerun = crash(project, None)
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(rerun.stdout)["status"] == "completed"
    assert json.loads((project / "cache/kit-check.json").read_text())["current"] == "2.0.0"


def test_crash_after_the_post_update_write_does_not_write_it_again(tmp_path):
    project = project_at_v1(tmp_path, {"cache/kit-check.json": "{}"})
    assert crash(project, "post-update-written:1").returncode == crashpoint.EXIT_CODE
    (project / "cache/kit-check.json").write_text('{"edited": "after the crash"}')
    assert crash(project, None).returncode == 0
    assert json.loads((project / "cache/kit-check.json").read_text()) == {
        "edited": "after the crash"
    }


def test_crash_mid_apply_keeps_the_snapshot_taken_before_any_write(tmp_path):
    # The notice's condition changes between the crash and the rerun: the rerun still
    # reports what held before the first part wrote anything.
    project = project_at_v1(tmp_path, {"kit.cfg": "loose = 1\n", "ci/audit.yml": "runs-on: old\n"})
    assert crash(project, "file-written:1").returncode == crashpoint.EXIT_CODE
    (project / "kit.cfg").write_text("strict = true\n")
    rerun = crash(project, None)
    assert rerun.returncode == 0, rerun.stderr
    doc = json.loads(rerun.stdout)
    assert "strict-mode" in [n["id"] for n in doc["notices"]]
    assert (project / "ci/audit.yml").read_text() == "runs-on: new\n"
    assert doc["backed_up"].count("ci/audit.yml") <= 1


def test_a_template_refreshed_before_a_crash_is_reported_as_refreshed_by_the_rerun(tmp_path):
    """The rerun finds the template already in sync; it still reports the refresh the
    interrupted run made, with its after-refresh text, as an uninterrupted run would."""
    exercised = 0
    for step in range(1, 8):
        where = tmp_path / f"crash-{step}"
        where.mkdir()
        project = project_at_v1(where, {"ci/audit.yml": "runs-on: old\n"})
        if crash(project, f"file-written:{step}").returncode != crashpoint.EXIT_CODE:
            break  # fewer writes than crash points
        if (project / "ci/audit.yml").read_text() != "runs-on: new\n":
            continue  # the crash came before the template's write
        exercised += 1
        rerun = crash(project, None)
        assert rerun.returncode == 0, rerun.stderr
        doc = json.loads(rerun.stdout)
        assert "refreshed:ci/audit.yml" in [n["id"] for n in doc["notices"]]
        assert "ci/audit.yml" in doc["buckets"]["update"]
    assert exercised >= 1


def test_published_schema_describes_the_declarations(tmp_path):
    import jsonschema

    from tether.profiles.gaia import DECLARATIONS

    schema = json.loads((Path(__file__).parents[2] / "schemas/lifecycle.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    manifest = json.loads((publish(tmp_path, V2) / "2.0.0/.tether/manifest.json").read_text())
    validator = schema_validator("lifecycle")
    validator.validate(manifest)
    validator.validate(DECLARATIONS)
    bad = {"migrations": [{"id": "m", "when": "later", "run": ["bash", "x.sh"]}]}
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(bad)
