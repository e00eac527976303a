"""Override families: the three actions, version sources, dropped entries, file validation."""

from __future__ import annotations

import json
import sys
from datetime import date
from pathlib import Path

import pytest

from fixtures.deps.kit import project, registry_file, run_cli, run_json, setup_cli
from fixtures.deps.loopback import LoopbackRegistry
from tether.deps.edit import Change
from tether.deps.model import Locus
from tether.deps.overrides import load, render_command
from tether.deps.programs import install_commands
from tether.deps.work import ApplyOptions, Bump, ProjectWork
from tether.errors import TetherError

# The command records its arguments in the project it runs in, so a test can see it ran.
RECORD = (
    f'{sys.executable} -c "import sys, pathlib; '
    "pathlib.Path('override-ran.txt').write_text(' '.join(sys.argv[1:]))\""
)


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    setup_cli(monkeypatch, tmp_path)
    ui = project(
        tmp_path / "ui",
        {
            "package.json": {
                "name": "ui",
                "devDependencies": {
                    "storybook": "^8.0.0",
                    "@storybook/react": "^8.0.0",
                    "@storybook/addon-docs": "^8.0.0",
                },
            },
            "package-lock.json": {},
        },
    )
    app = project(
        tmp_path / "app",
        {
            "package.json": {"name": "app", "dependencies": {"gamma": "^4.0.0", "alpha": "^1.0.0"}},
            "package-lock.json": {},
        },
    )
    # the documented default place: the user's config folder (setup_cli points it into tmp)
    (tmp_path / "config" / "tether").mkdir(parents=True)
    (tmp_path / "config" / "tether" / "deps-overrides.yaml").write_text(
        "# families moved by their own command\n"
        "- id: storybook\n"
        '  match: ["storybook", "@storybook/*"]\n'
        f"  command: {json.dumps(RECORD + ' upgrade {version}')}\n"
        '  versionSource: "target-of:storybook"\n'
        "  notes: the upgrade command also runs the codemods\n"
        "- id: gamma-family\n"
        "  match: [gamma]\n"
        f"  command: {json.dumps(RECORD + ' gamma {version}')}\n"
        '  versionSource: "target-of:not-planned"\n'
        "- id: alpha-latest\n"
        "  match: [alpha]\n"
        f"  command: {json.dumps(RECORD + ' alpha {version}')}\n"
        '  versionSource: "max-target-of:zzz*"\n'
        "  fallbackVersionSource: latest\n"
    )
    return registry_file(tmp_path / "projects.json", {"ui": ui, "app": app})


def deps(registry: Path, server: LoopbackRegistry, *args: str) -> list[str]:
    return ["deps", *args, "--registry", str(registry), "--npm-registry", server.url]


def manifest(registry: Path, name: str) -> dict[str, dict[str, str]]:
    data: dict[str, dict[str, str]] = json.loads(
        (registry.parent / name / "package.json").read_text()
    )
    return data


def test_plan_binds_entries_and_drops_unresolvable(setup: Path, server: LoopbackRegistry) -> None:
    code, doc = run_json(*deps(setup, server, "plan", "--level", "minor"))
    assert code == 0
    overrides = {o["id"]: o for o in doc["overrides"]}
    assert set(overrides) == {"storybook", "alpha-latest"}
    storybook = overrides["storybook"]
    assert storybook["packages"] == ["storybook", "@storybook/react", "@storybook/addon-docs"]
    assert storybook["version"] == "8.4.7" and storybook["projects"] == ["ui"]
    assert storybook["command"].endswith("upgrade 8.4.7")
    assert overrides["alpha-latest"]["version"] == "2.2.0"  # the fallback: alpha's latest tag
    assert any("override gamma-family dropped" in w for w in doc["warnings"])


def test_run_override(setup: Path, server: LoopbackRegistry) -> None:
    before = (setup.parent / "ui" / "package.json").read_bytes()
    args = deps(
        setup,
        server,
        "apply",
        "--level",
        "minor",
        "--yes",
        "--no-install",
        "--override-action",
        "alpha-latest=force-generic",
        "--override-action",
        "storybook=run-override",
    )
    code, doc = run_json(*args)
    assert code == 0, doc
    ui = setup.parent / "ui"
    assert (ui / "override-ran.txt").read_text() == "upgrade 8.4.7"
    assert (ui / "package.json").read_bytes() == before  # the command, not the generic bump
    applied = {p["name"]: p for p in doc["applied"]}
    assert [s["step"] for s in applied["ui"]["steps"]] == ["override:storybook"]
    assert applied["ui"]["overrides"][0]["id"] == "storybook"
    # gamma's entry was dropped: the generic bump happened, and alpha was forced generic.
    assert manifest(setup, "app")["dependencies"] == {"gamma": "^4.1.1", "alpha": "^1.2.3"}
    assert not (setup.parent / "app" / "override-ran.txt").exists()


def test_skip_matched(setup: Path, server: LoopbackRegistry) -> None:
    args = deps(
        setup,
        server,
        "apply",
        "--level",
        "minor",
        "--yes",
        "--no-install",
        "--override-action",
        "storybook=skip-matched",
        "--override-action",
        "alpha-latest=skip-matched",
    )
    code, doc = run_json(*args)
    assert code == 0
    assert [p["name"] for p in doc["skipped_by_override"]] == [
        "storybook",
        "@storybook/react",
        "@storybook/addon-docs",
        "alpha",
    ]
    assert "ui" not in {p["name"] for p in doc["applied"]}
    assert manifest(setup, "ui")["devDependencies"]["storybook"] == "^8.0.0"
    assert not (setup.parent / "ui" / "override-ran.txt").exists()
    text_args = deps(
        setup,
        server,
        "apply",
        "--level",
        "minor",
        "--yes",
        "--no-install",
        "--override-action",
        "storybook=skip-matched",
        "--override-action",
        "alpha-latest=run-override",
    )
    code, out, _ = run_cli(*text_args)
    assert "## Skipped by override (3)" in out  # alpha's entry ran this time
    assert (setup.parent / "app" / "override-ran.txt").read_text() == "alpha 2.2.0"


def test_force_generic(setup: Path, server: LoopbackRegistry) -> None:
    args = deps(
        setup,
        server,
        "apply",
        "--level",
        "minor",
        "--yes",
        "--no-install",
        "--override-action",
        "storybook=force-generic",
        "--override-action",
        "alpha-latest=force-generic",
    )
    code, doc = run_json(*args)
    assert code == 0
    assert manifest(setup, "ui")["devDependencies"] == {
        "storybook": "^8.4.7",
        "@storybook/react": "^8.4.7",
        "@storybook/addon-docs": "^8.4.5",
    }
    assert not (setup.parent / "ui" / "override-ran.txt").exists()
    assert doc["overrides"] == []


def test_decisions_are_asked_once_per_entry(setup: Path, server: LoopbackRegistry) -> None:
    args = deps(setup, server, "apply", "--level", "minor", "--no-install")
    code, out, err = run_cli(*args, stdin="all\nskip-matched\nf\na\n")
    assert code == 0, out
    assert err.count("Override storybook") == 1 and err.count("Override alpha-latest") == 1
    assert "Override storybook" not in out  # a question never goes to stdout
    assert manifest(setup, "app")["dependencies"]["alpha"] == "^1.2.3"


def test_unknown_override_action(setup: Path, server: LoopbackRegistry) -> None:
    for action, message in (
        ("nope=skip-matched", "no override 'nope'"),
        ("storybook=explode", "run-override"),
    ):
        args = deps(
            setup, server, "apply", "--level", "minor", "--yes", "--override-action", action
        )
        code, _, err = run_cli(*args)
        assert code == 2 and message in err


def test_max_target_of(tmp_path: Path, setup: Path, server: LoopbackRegistry) -> None:
    overrides = tmp_path / "other.yaml"
    overrides.write_text(
        "overrides:\n"
        "  - id: sb\n"
        "    match: ['@storybook/*', storybook]\n"
        "    command: echo {version}\n"
        "    versionSource: max-target-of:@storybook/*\n"
    )
    _, doc = run_json(
        *deps(setup, server, "plan", "--level", "minor", "--overrides", str(overrides))
    )
    assert [(o["id"], o["version"]) for o in doc["overrides"]] == [("sb", "8.4.7")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- id: x\n  match: [a]\n  command: echo\n", "missing field 'versionSource'"),
        ("- id: x\n  match: [a]\n  command: echo\n  versionSource: newest\n", "is not target-of"),
        (
            "- id: x\n  match: [a]\n  command: echo\n  versionSource: latest\n  shell: true\n",
            "unknown field 'shell'",
        ),
        (
            '- id: x\n  match: [a]\n  command: "echo \'open"\n  versionSource: latest\n',
            "cannot be split",
        ),
        ("{a: [}", "invalid YAML"),
        ("just text\n", "expected a list"),
    ],
)
def test_file_validation(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "o.yaml"
    path.write_text(text)
    with pytest.raises(TetherError, match=message):
        load(path)


def test_a_missing_overrides_file_is_a_one_line_error(
    tmp_path: Path, setup: Path, server: LoopbackRegistry
) -> None:
    missing = tmp_path / "nope.yaml"
    code, out, err = run_cli(
        *deps(setup, server, "plan", "--level", "minor", "--overrides", str(missing))
    )
    assert (code, out) == (1, "")
    assert err == f"tether: {missing}: cannot read the overrides file (No such file or directory)\n"


def test_version_never_becomes_shell_syntax() -> None:
    argv = render_command("tool upgrade --to={version} '{version} x'", "1.0.0; rm -rf /")
    assert argv == ["tool", "upgrade", "--to=1.0.0; rm -rf /", "1.0.0; rm -rf / x"]


def test_no_install_when_only_overrides_ran() -> None:
    options = ApplyOptions("minor", date(2025, 6, 1))
    only_override = ProjectWork("ui", Path("."), "npm", None)
    assert install_commands(only_override, options) == []
    bumped = ProjectWork("app", Path("."), "pnpm", "uv", bumps=[_bump("npm"), _bump("pypi")])
    assert install_commands(bumped, options) == [
        ["pnpm", "install", "--no-frozen-lockfile"],
        ["uv", "lock"],
    ]
    assert install_commands(bumped, ApplyOptions("minor", date(2025, 6, 1), install=False)) == []


def _bump(ecosystem: str) -> Bump:
    locus = Locus("package.json", "dependencies", "json", ("dependencies", "x"))
    return Bump("x", ecosystem, "^1.0.0", "^1.1.0", Change(locus, "^1.0.0", "^1.1.0"))


def _with_docs_site(setup: Path) -> None:
    """A second project whose only family member is ``storybook`` itself."""
    project(
        setup.parent / "site",
        {
            "package.json": {"name": "site", "devDependencies": {"storybook": "^8.0.0"}},
            "package-lock.json": {},
        },
    )
    document = json.loads(setup.read_text())
    record = dict(document["projects"]["ui"], name="site", path=str(setup.parent / "site"))
    document["projects"]["site"] = record
    setup.write_text(json.dumps(document))


def test_excluding_a_family_drops_its_command_where_nothing_of_it_is_left(
    setup: Path, server: LoopbackRegistry
) -> None:
    _with_docs_site(setup)
    args = deps(setup, server, "apply", "--level", "minor", "--no-install", "--json")
    # storybook: run-override, alpha-latest: force-generic, then pick-subset excluding storybook
    code, out, _ = run_cli(*args, stdin="all\nr\nf\np\nstorybook\n")
    assert code == 0, out
    doc = json.loads(out)
    [storybook] = doc["overrides"]
    assert storybook["projects"] == ["ui"]  # site had only storybook, now excluded
    assert storybook["packages"] == ["@storybook/react", "@storybook/addon-docs"]
    assert (setup.parent / "ui" / "override-ran.txt").read_text() == "upgrade 8.4.7"
    assert not (setup.parent / "site" / "override-ran.txt").exists()
    assert manifest(setup, "site")["devDependencies"] == {"storybook": "^8.0.0"}
    [skipped] = doc["skipped_by_user"]
    assert skipped["name"] == "storybook" and "override" not in skipped


def test_excluding_the_whole_family_drops_the_override(
    setup: Path, server: LoopbackRegistry
) -> None:
    _with_docs_site(setup)
    args = deps(setup, server, "apply", "--level", "minor", "--no-install")
    family = "storybook,@storybook/react,@storybook/addon-docs"
    code, out, _ = run_cli(*args, stdin=f"all\nr\nf\np\n{family}\n")
    assert code == 0, out
    assert not (setup.parent / "ui" / "override-ran.txt").exists()
    assert not (setup.parent / "site" / "override-ran.txt").exists()
    assert "## Skipped by user (3)" in out
    assert "override:storybook" not in out and "storybook (storybook)" not in out
    assert manifest(setup, "ui")["devDependencies"]["storybook"] == "^8.0.0"


def test_under_yes_every_override_needs_its_action(setup: Path, server: LoopbackRegistry) -> None:
    before = manifest(setup, "ui")
    args = deps(setup, server, "apply", "--level", "minor", "--yes", "--no-install")
    code, _, err = run_cli(*args, "--override-action", "storybook=run-override")
    assert code == 2
    assert "1 override(s) apply to this plan (alpha-latest): choose --override-action" in err
    assert manifest(setup, "ui") == before
    assert not (setup.parent / "ui" / "override-ran.txt").exists()


def test_an_overrides_file_in_the_current_folder_is_never_read(
    setup: Path, server: LoopbackRegistry
) -> None:
    """The file sits in the documented place (a notice says so); a stray one in the folder
    the command runs in, whose command would write a file, is not read."""
    stray = Path.cwd() / ".tether" / "deps-overrides.yaml"
    stray.parent.mkdir()
    stray.write_text(f"- id: stray\n  match: [gamma]\n  command: {json.dumps(RECORD)}\n")
    code, doc = run_json(*deps(setup, server, "plan", "--level", "minor"))
    assert code == 0
    assert {o["id"] for o in doc["overrides"]} == {"storybook", "alpha-latest"}
    default = setup.parent / "config" / "tether" / "deps-overrides.yaml"
    assert doc["overrides_file"] == str(default)
    assert f"override families read from {default}" in " ".join(doc["warnings"])

    default.unlink()
    code, doc = run_json(*deps(setup, server, "plan", "--level", "minor"))
    assert code == 0 and doc["overrides"] == [] and doc["overrides_file"] is None


def test_a_package_the_conflict_policy_dropped_runs_no_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackRegistry
) -> None:
    """Overrides bind to the plan after the conflict policy: alpha conflicts (two's week-long
    release-age gate keeps it below 2.2.0), skip-package drops it, so its family's command
    runs nowhere and no decision is asked for it; gamma still moves."""
    setup_cli(monkeypatch, tmp_path)
    roots = {
        name: project(
            tmp_path / name,
            {
                "package.json": {
                    "name": name,
                    "dependencies": {"alpha": "^2.0.0", "gamma": "^4.0.0"},
                },
                "package-lock.json": {},
            },
        )
        for name in ("one", "two")
    }
    (roots["two"] / ".npmrc").write_text("min-release-age=7\n")
    overrides = tmp_path / "overrides.yaml"
    overrides.write_text(
        "- id: alpha-family\n"
        "  match: [alpha]\n"
        f"  command: {json.dumps(RECORD + ' alpha {version}')}\n"
        "  versionSource: target-of:alpha\n"
    )
    reg = registry_file(tmp_path / "projects.json", roots)
    flags = ("--level", "minor", "--conflict-policy", "skip-package", "--overrides", str(overrides))
    code, plan = run_json(*deps(reg, server, "plan", *flags))
    assert code == 0
    assert [p.get("skipped_by") for p in plan["packages"] if p["name"] == "alpha"] == [
        "conflict-policy"
    ]
    assert plan["overrides"] == []

    code, doc = run_json(*deps(reg, server, "apply", *flags, "--yes", "--no-install"))
    assert code == 0, doc
    assert [p["name"] for p in doc["skipped_by_conflict_policy"]] == ["alpha"]
    assert doc["overrides"] == []
    for name, root in roots.items():
        assert not (root / "override-ran.txt").exists(), name
        assert manifest(reg, name)["dependencies"] == {"alpha": "^2.0.0", "gamma": "^4.1.1"}


def _nothing(setup: Path, server: LoopbackRegistry, *extra: str) -> tuple[int, dict, str]:
    args = deps(setup, server, "apply", "--level", "minor", "--yes", *extra)
    code, doc = run_json(*args)
    text = run_cli(*args)[1]
    return code, doc, text.splitlines()[0]


def test_each_reason_for_nothing_to_apply_is_named_and_nothing_is_written(
    setup: Path, server: LoopbackRegistry
) -> None:
    """No update at the level, every update skip-matched by its family, every update left
    out: each ends with exit 0, no run folder, nothing written, and says which it was."""
    before = {n: manifest(setup, n) for n in ("ui", "app")}
    skip_all = ("--override-action", "storybook=skip-matched", "--projects", "ui")
    code, doc, line = _nothing(setup, server, *skip_all)
    assert (code, doc["status"], doc["nothing_to_apply"], doc["run_dir"]) == (
        0,
        "nothing",
        "skipped-by-override",
        None,
    )
    assert line == (
        "tether deps minor: every update that moves is left alone by its override family "
        "(skip-matched); nothing to apply"
    )
    left_out = ("--projects", "app", "--override-action", "alpha-latest=force-generic")
    code, doc, line = _nothing(setup, server, *left_out, "--skip-package", "gamma,alpha")
    assert (code, doc["nothing_to_apply"]) == (0, "excluded")
    assert line == "tether deps minor: every update was left out; nothing to apply"
    code, doc, line = _nothing(setup, server, "--projects", "ui", "--level", "patch")
    assert (code, doc["nothing_to_apply"]) == (0, "no-updates")
    assert line == "tether deps patch: no patch update for any selected project; nothing to apply"
    assert {n: manifest(setup, n) for n in ("ui", "app")} == before
    assert not (setup.parent / "state").exists()


def test_override_questions_follow_the_plan_table_and_name_what_they_decide(
    setup: Path, server: LoopbackRegistry
) -> None:
    """On a terminal the plan table comes first, then one question per override family
    with its notes, the packages it matched in every project, the projects it affects, the
    command it would run and its reference, then the one confirmation."""
    args = deps(setup, server, "apply", "--level", "minor", "--no-install")
    code, out, err = run_cli(*args, stdin="all\nr\nf\nc\n")
    assert code == 0 and out.rstrip().endswith("Cancelled. No files modified.")
    table = err.index("| package | proposed target | projects | locations |")
    family = err.index("Override storybook: the upgrade command also runs the codemods")
    gate = err.index("Apply ")
    assert table < family < gate
    block = err[family:gate]
    assert "  matched packages (in every project): storybook, @storybook/react, " in block
    assert "  affected projects: ui\n" in block
    assert "  command: " in block and "upgrade 8.4.7" in block
    assert err.count("| package | proposed target | projects | locations |") == 1
