"""Review scope in real repositories, and members/remits from rosters."""

from __future__ import annotations

from pathlib import Path

import pytest

import tether.git
from builders import git
from tests.audit.builders import audit, audit_json, commit, make_repo, write
from tether.audit.roster import GlobSet, load_roster, resolve_remit
from tether.audit.workspace import GAIA_LAYOUT, NATIVE_LAYOUT, choose_layout
from tether.errors import TetherError, UsageError

BASE = {
    "scripts/a.sh": "echo a\n",
    "scripts/deep/c.sh": "echo c\n",
    "scripts/gone.sh": "echo gone\n",
    "docs/guide.md": "# guide\n",
}
BRANCH = {
    "scripts/a.sh": "echo a2\n",
    "scripts/deep/new.sh": "echo new\n",
    "scripts/gone.sh": None,
    "docs/guide.md": "# guide 2\n",
}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = make_repo(tmp_path, monkeypatch, BASE, BRANCH)
    # main moves on after the fork: three-dot scope must not show its change.
    git(repo, "switch", "-q", "main")
    commit(repo, "main moves", {"scripts/deep/c.sh": "echo c on main\n"})
    git(repo, "switch", "-q", "feature")
    return repo


def test_scope_is_the_three_dot_diff_filtered_by_the_remit(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, doc = audit_json(
        capsys, "scope", "-C", str(repo), "--base-ref", "main", "--remit", "scripts/**/*.sh"
    )
    assert code == 0
    assert doc["files"] == ["scripts/a.sh", "scripts/deep/new.sh"]
    assert doc["deleted"] == ["scripts/gone.sh"]
    assert doc["dirty"] == []
    assert doc["merge_base"] == git(repo, "merge-base", "main", "HEAD").strip()
    assert doc["head"] == git(repo, "rev-parse", "HEAD").strip()
    assert doc["branch"]["default_branch"] == "main"
    assert doc["branch"]["files"] == ["scripts/a.sh", "scripts/deep/new.sh"]


def test_scope_without_remit_lists_every_change(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, doc = audit_json(capsys, "scope", "-C", str(repo), "--base-ref", "main")
    assert doc["files"] == ["docs/guide.md", "scripts/a.sh", "scripts/deep/new.sh"]


def test_dirty_in_scope_files_are_reported_and_never_enter_the_list(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        repo,
        {
            "scripts/a.sh": "echo edited\n",
            "scripts/untracked.sh": "echo u\n",
            "docs/guide.md": "out of remit\n",
        },
    )
    _, doc = audit_json(capsys, "scope", "-C", str(repo), "--base-ref", "main", "--remit", "*.sh")
    assert doc["files"] == ["scripts/a.sh", "scripts/deep/new.sh"]
    assert doc["dirty"] == ["scripts/a.sh", "scripts/untracked.sh"]


def test_branch_list_uses_the_default_branch_fork_point(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    commit(repo, "second", {"scripts/deep/c.sh": "echo c2\n"})
    _, doc = audit_json(capsys, "scope", "-C", str(repo), "--base-ref", "HEAD~1", "--remit", "*.sh")
    assert doc["files"] == ["scripts/deep/c.sh"]
    assert doc["branch"]["files"] == ["scripts/a.sh", "scripts/deep/c.sh", "scripts/deep/new.sh"]


def test_a_member_scope_asks_git_each_of_its_questions_once(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default branch, HEAD's fork point from it, HEAD's commit and the branch's list
    (the review starts at the fork point here) are one answer each within one command. The
    fork point is HEAD's own commit, so no merge base is asked for it; a named base's is
    asked once. Without a clearance on record, only the digest reads stored bytes."""
    write(repo, {".tether/audit.yml": "members:\n  - name: docs\n    globs: ['docs/**']\n"})
    asked: list[str] = []
    readers: list[Path] = []
    real, real_reader = tether.git.run_git, tether.git.BlobReader

    def noting(args, *rest, **options):  # type: ignore[no-untyped-def]
        asked.append(" ".join(args))
        return real(args, *rest, **options)

    class NotedReader(real_reader):  # type: ignore[misc,valid-type]
        def __init__(self, where: Path) -> None:
            readers.append(where)
            super().__init__(where)

    monkeypatch.setattr(tether.git, "run_git", noting)
    monkeypatch.setattr(tether.git, "BlobReader", NotedReader)
    code, doc = audit_json(capsys, "scope", "-C", str(repo), "--member", "docs")
    assert code == 0, doc
    fork = git(repo, "merge-base", "main", "HEAD").strip()
    assert doc["merge_base"] == doc["branch"]["fork_point"] == doc["base"] == fork
    assert doc["files"] == doc["branch"]["files"] == ["docs/guide.md"]
    assert doc["scope_digest"] == doc["content_digest"]
    assert sum("refs/remotes/origin/HEAD" in line for line in asked) == 1
    assert sum(line.startswith("merge-base --fork-point") for line in asked) == 1
    assert not [line for line in asked if line.startswith("merge-base --end-of-options")]
    assert sum(line.endswith("HEAD^{commit}") for line in asked) == 1
    assert sum(line.startswith("diff ") for line in asked) == 1
    assert len(readers) == 1

    asked.clear()
    code, doc = audit_json(
        capsys, "scope", "-C", str(repo), "--member", "docs", "--base-ref", "main"
    )
    assert code == 0, doc
    assert (doc["base"], doc["merge_base"], doc["files"]) == ("main", fork, ["docs/guide.md"])
    assert sum(line.startswith("merge-base --end-of-options") for line in asked) == 1


def test_unresolvable_base_is_exit_1_never_an_empty_list(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = audit(capsys, "scope", "-C", str(repo), "--base-ref", "origin/nope")
    assert code == 1
    assert out == ""
    assert "does not name a commit" in err
    git(repo, "checkout", "-q", "--orphan", "island")
    commit(repo, "unrelated", {"x.sh": "echo x\n"})
    code, _, err = audit(capsys, "scope", "-C", str(repo), "--base-ref", "feature")
    assert code == 1
    assert "no common ancestor" in err


def test_root_must_be_a_checkout_root(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = audit(capsys, "scope", "-C", str(repo / "scripts"), "--base-ref", "main")
    assert code == 2
    assert "not the top of a checkout" in err
    outside = tmp_path / "plain"
    outside.mkdir()
    assert audit(capsys, "scope", "-C", str(outside), "--base-ref", "main")[0] == 2
    # Without -C the checkout around the current directory is used.
    monkeypatch.chdir(repo / "scripts")
    code, doc = audit_json(capsys, "scope", "--base-ref", "main", "--remit", "*.sh")
    assert code == 0 and doc["project_dir"] == str(repo.resolve())


def test_human_scope_output(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = audit(capsys, "scope", "-C", str(repo), "--base-ref", "main", "--remit", "*.sh")
    assert code == 0
    assert "in scope: 2" in out and "  scripts/deep/new.sh" in out and "deleted: 1" in out


def test_remit_file_and_roster_member(
    repo: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    remit_file = tmp_path / "remit.txt"
    remit_file.write_text("# shell only\nscripts/deep/\n")
    _, doc = audit_json(
        capsys, "scope", "-C", str(repo), "--base-ref", "main", "--remit-file", str(remit_file)
    )
    assert doc["files"] == ["scripts/deep/new.sh"]
    write(repo, {".tether/audit.yml": "members:\n  - name: docs\n    globs: ['docs/**']\n"})
    _, doc = audit_json(capsys, "scope", "-C", str(repo), "--base-ref", "main", "--member", "docs")
    assert doc["member"] == "docs" and doc["files"] == ["docs/guide.md"]
    code, _, err = audit(
        capsys, "scope", "-C", str(repo), "--base-ref", "main", "--member", "nobody"
    )
    assert code == 1 and "no member 'nobody'" in err


def test_glob_semantics() -> None:
    globs = GlobSet(["**/*.sh", "!vendor/**", "hooks/"])
    assert globs.matches("a/b/c.sh") and globs.matches("top.sh")
    assert not globs.matches("vendor/x.sh")
    assert globs.matches("hooks/pre-commit")
    assert not GlobSet([]).matches("anything")


def test_native_and_gaia_rosters(tmp_path: Path) -> None:
    (tmp_path / ".tether").mkdir()
    (tmp_path / ".tether/audit.yml").write_text(
        "members:\n  - name: shell\n    globs: ['**/*.sh']\nmachinery: ['gate/**']\n"
        "hooks: ['hooks/**']\n"
    )
    roster = load_roster(tmp_path, NATIVE_LAYOUT)
    remit = resolve_remit(roster, member="shell")
    assert remit.globs == ("**/*.sh",)
    assert remit.is_machinery("gate/run.sh") and remit.is_machinery(".tether/audit.yml")
    assert roster.hooks == ("hooks/**",) and roster.posix == (".husky/**",)

    gaia = tmp_path / "g"
    (gaia / ".gaia").mkdir(parents=True)
    (gaia / ".gaia/audit-ci.yml").write_text(
        "gate_label: null\nauditors:\n  - name: code-audit-bash\n    globs:\n"
        '      - ".gaia/**/*.sh"\n'
    )
    assert choose_layout(gaia) is GAIA_LAYOUT
    roster = load_roster(gaia, GAIA_LAYOUT)
    assert [m.name for m in roster.members] == ["code-audit-bash"]
    assert roster.hooks == GAIA_LAYOUT.default_hooks
    assert resolve_remit(roster, member="code-audit-bash").is_machinery(".gaia/audit-ci.yml")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("members: {}\n", "members must be a list"),
        ("members:\n  - globs: ['a']\n", "members[0]: name must be a non-empty string"),
        ("members:\n  - name: x\n", "members[0]: globs must list at least one glob"),
        ("members:\n  - name: x\n    globs: [1]\n", "members[0]: globs: must be a list"),
        ("- just a list\n", "the roster must be a mapping"),
    ],
)
def test_roster_errors(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / ".tether").mkdir()
    (tmp_path / ".tether/audit.yml").write_text(text)
    with pytest.raises(TetherError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_roster(tmp_path, NATIVE_LAYOUT)


def test_ad_hoc_remit_needs_a_member_name_where_records_are_written(tmp_path: Path) -> None:
    roster = load_roster(tmp_path, NATIVE_LAYOUT)
    with pytest.raises(UsageError):
        resolve_remit(roster, remits=["*.sh"], require_member=True)
    remit = resolve_remit(roster, remits=["*.sh"], member="adhoc", machinery=["gate.sh"])
    assert remit.covers("x/y.sh") and remit.is_machinery("gate.sh")
    assert not remit.is_machinery(".tether/audit.yml")  # ad hoc: only what was given


def test_an_empty_root_is_a_usage_error_never_the_ambient_checkout(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)  # the checkout an empty root would silently stand for
    for argv in (
        ["scope", "-C", "", "--base-ref", "main"],
        ["digest", "-C", " ", "--remit", "*.sh", "--member", "m"],
        ["shell", "-C", ""],
    ):
        code, out, err = audit(capsys, *argv)
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and "-C '' is empty" in err


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["scope", "--base-ref", "main", "--remit", "scripts/[z-a].sh"], "--remit: invalid glob"),
        (["shell", "--remit", "scripts\\"], "--remit: invalid glob 'scripts\\\\'"),
        (["digest", "--remit", "*.sh", "--member", "m", "--machinery", "!"], "--machinery"),
        (["shell", "--remit", "*.sh", "--hooks", "[z-a]"], "--hooks: invalid glob"),
    ],
)
def test_an_invalid_glob_on_the_command_line_is_one_line_naming_it(
    repo: Path, capsys: pytest.CaptureFixture[str], argv: list[str], named: str
) -> None:
    code, out, err = audit(capsys, *argv, "-C", str(repo))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and named in err and "Traceback" not in err


def test_an_invalid_glob_in_a_roster_or_remit_file_names_the_file(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    globs = repo.parent / "remit.txt"
    globs.write_text("# remit\nscripts/**\nscripts/[z-a]\n")
    code, _, err = audit(capsys, "shell", "-C", str(repo), "--remit-file", str(globs))
    assert code == 2 and err.count("\n") == 1
    assert f"--remit-file {globs}: invalid glob 'scripts/[z-a]'" in err
    commit(
        repo,
        "roster",
        {".tether/audit.yml": "members:\n  - name: shell\n    globs: ['ok/**', 'bad\\']\n"},
    )
    code, _, err = audit(capsys, "digest", "-C", str(repo), "--member", "shell")
    assert code == 1 and err.count("\n") == 1
    assert ".tether/audit.yml: members[0]: globs: invalid glob 'bad\\\\'" in err
