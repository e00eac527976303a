"""The release side of a cruft update rendered from the baseline's render (only the changed
sources through cookiecutter): byte for byte the full render's tree, and a full render
whenever a condition of that exactness does not hold. Real cookiecutter, real git template
repositories in tmp_path, tether's render cache in tmp_path."""

from __future__ import annotations

import importlib.util
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from builders import git, write_files
from tether.templates import HOOKS_REFUSE, HOOKS_SKIP, cruft_incremental
from tether.templates.records import CRUFT, TemplateRecord
from tether.templates.render import render_record

# cookiecutter is imported by the tests that run it, not when the module is collected: every
# test process collects every module, and most run none of these tests.
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("cookiecutter") is None, reason="the cruft extra is not installed"
)

SLUG = "{{cookiecutter.project_slug}}"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01{{ x }}\x00\xff\xfe"
CONTEXT = {
    "project_name": "Demo",
    "project_slug": "demo",
    "_copy_without_render": ["raw_*"],
}
V1: dict[str, str | bytes] = {
    "cookiecutter.json": json.dumps(CONTEXT),
    "README.md": "about the template, not rendered\n",
    f"{SLUG}/same.txt": "# {{ cookiecutter.project_name }}\nunchanged\n",
    f"{SLUG}/plain.txt": "no jinja here\n",
    f"{SLUG}/changed.txt": "# {{ cookiecutter.project_name }}\nversion 1\n",
    f"{SLUG}/removed.txt": "gone in version 2\n",
    f"{SLUG}/old_name.txt": "{{ cookiecutter.project_slug }} moves\n",
    f"{SLUG}/{SLUG}_pkg/__init__.py": "NAME = '{{ cookiecutter.project_slug }}'\n",
    f"{SLUG}/{SLUG}_pkg/core.py": "VERSION = 1\n",
    f"{SLUG}/only_v1/lonely.txt": "its folder goes with it\n",
    f"{SLUG}/logo.png": PNG,
    f"{SLUG}/data.bin": b"\x00\x01\x02 v1",
    f"{SLUG}/raw_{SLUG}.txt": "{{ stays as written }}\n",
    f"{SLUG}/raw_changed.txt": "{{ raw }} 1\n",
    f"{SLUG}/commit.txt": "made from {{ cookiecutter._commit }}\n",
    f"{SLUG}/everything.json": "{{ cookiecutter | jsonify }}\n",
    f"{SLUG}/crlf.txt": "windows {{ cookiecutter.project_slug }}\r\nline\r\n",
    f"{SLUG}/run.sh": "#!/bin/sh\necho {{ cookiecutter.project_slug }}\n",
}
V2: dict[str, str | bytes] = {
    **{k: v for k, v in V1.items() if "removed" not in k and "old_name" not in k},
    f"{SLUG}/changed.txt": "# {{ cookiecutter.project_name }}\nversion 2\n",
    f"{SLUG}/new_name.txt": "{{ cookiecutter.project_slug }} moves\n",
    f"{SLUG}/{SLUG}_pkg/core.py": "VERSION = 2\n",
    f"{SLUG}/{SLUG}_pkg/added/{SLUG}.cfg": "[{{ cookiecutter.project_slug }}]\n",
    f"{SLUG}/data.bin": b"\x00\x01\x02 v2",
    f"{SLUG}/raw_changed.txt": "{{ raw }} 2\n",
}
V2.pop(f"{SLUG}/only_v1/lonely.txt")
EXECUTABLE = f"{SLUG}/run.sh"


def template_repo(root: Path, versions: list[dict[str, str | bytes]]) -> list[str]:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    commits = []
    for files in versions:
        for old in git(root, "ls-files", "-z").split("\0"):
            if old:
                (root / old).unlink()
        write_files(root, files)
        if EXECUTABLE in files:
            (root / EXECUTABLE).chmod(0o755)
        git(root, "add", "-A")
        git(root, "commit", "-qm", "version")
        commits.append(git(root, "rev-parse", "HEAD").strip())
    return commits


def record_at(template: Path, commit: str, answers: dict[str, Any] | None = None) -> TemplateRecord:
    return TemplateRecord(
        kind=CRUFT,
        path=".cruft.json",
        src=str(template),
        commit=commit,
        answers=dict(answers or {"project_name": "Demo", "project_slug": "demo"}),
        raw=b"{}",
    )


def snapshot(root: Path) -> dict[str, tuple[str, bytes | None]]:
    """Every file's bytes and mode and every folder, below ``root``."""
    found: dict[str, tuple[str, bytes | None]] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        mode = oct(stat.S_IMODE(path.lstat().st_mode))
        found[rel] = (mode, None) if path.is_dir() else (mode, path.read_bytes())
    return found


def full_render(tmp_path: Path, record: TemplateRecord, ref: str, **kw: Any) -> Path:
    """``ref`` rendered in full: in a cache of its own that holds no baseline."""
    os.environ["TETHER_RENDER_CACHE"] = str(tmp_path / "cache-full")
    try:
        tree, _facts = render_record(record, ref, record.answers, **kw)
    finally:
        os.environ["TETHER_RENDER_CACHE"] = str(tmp_path / "cache")
    return tree


@pytest.fixture(autouse=True)
def render_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETHER_RENDER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no user config of cookiecutter's


def counts() -> tuple[int, int]:
    return cruft_incremental.RENDERS.get("incremental", 0), cruft_incremental.RENDERS.get("full", 0)


def test_the_incremental_release_render_is_the_full_render_byte_for_byte(
    tmp_path: Path,
) -> None:
    template = tmp_path / "template"
    first, second = template_repo(template, [V1, V2])
    record = record_at(template, first)
    base_tree, _ = render_record(record, first, record.answers)
    incremental_before, full_before = counts()
    tree, facts = render_record(record, second, record.answers)
    assert counts() == (incremental_before + 1, full_before)  # no full render of v2

    expected = full_render(tmp_path, record, second)
    assert snapshot(tree) == snapshot(expected)
    assert facts["context"]["cookiecutter"]["_commit"] == second
    # An unchanged output is the baseline's file; one reading _commit or the whole context
    # was rendered again (its bytes differ from the baseline's).
    assert (tree / "same.txt").stat().st_ino == (base_tree / "same.txt").stat().st_ino
    assert (tree / "commit.txt").read_text() == f"made from {second}\n"
    assert second in (tree / "everything.json").read_text()
    assert not (tree / "only_v1").exists() and not (tree / "old_name.txt").exists()
    assert (tree / "raw_{{cookiecutter.project_slug}}.txt").exists() is False
    assert (tree / "raw_demo.txt").read_text() == "{{ stays as written }}\n"
    assert (tree / "crlf.txt").read_bytes() == b"windows demo\r\nline\r\n"
    assert (tree / "run.sh").stat().st_mode & 0o111
    assert (tree / "demo_pkg/added/demo.cfg").read_text() == "[demo]\n"


def _case(name: str) -> tuple[dict[str, str | bytes], dict[str, str | bytes]]:
    """(v1, v2) of a template for which the release side must be rendered in full."""
    base: dict[str, str | bytes] = {
        "cookiecutter.json": json.dumps({"project_name": "Demo", "project_slug": "demo"}),
        f"{SLUG}/a.txt": "{{ cookiecutter.project_name }} 1\n",
        f"{SLUG}/b.txt": "unchanged\n",
    }
    changed = {**base, f"{SLUG}/a.txt": "{{ cookiecutter.project_name }} 2\n"}
    if name == "hook":
        return base, {**changed, "hooks/post_gen_project.py": "print('hi')\n"}
    if name == "include":
        parts = {f"{SLUG}/part.txt": "part {{ cookiecutter.project_slug }}\n"}
        return (
            {**base, **parts, f"{SLUG}/b.txt": "{%- include 'part.txt' %}\n"},
            {**changed, **parts, f"{SLUG}/b.txt": "{%- include 'part.txt' %}\n"},
        )
    if name == "extends":
        layout = {f"{SLUG}/layout.txt": "top {% block body %}{% endblock %}\n"}
        child = '{% extends "layout.txt" %}{% block body %}child{% endblock %}'
        return (
            {**base, **layout, f"{SLUG}/b.txt": child},
            {**changed, **layout, f"{SLUG}/b.txt": child},
        )
    if name in ("random", "uuid", "now", "random filter"):
        call = {
            "random filter": "{{ ['abcdef', 'ghijkl'] | map('random') | join }}",
            "random": "{{ random_ascii_string(12) }}",
            "uuid": "{{ uuid4() }}",
            "now": "{% now 'utc', '%Y-%m-%d %H:%M:%S.%f' %}",
        }[name]
        return (
            {**base, f"{SLUG}/b.txt": f"id {call}\n"},
            {**changed, f"{SLUG}/b.txt": f"id {call}\n"},
        )
    if name == "cookiecutter.json":
        more = json.dumps({"project_name": "Demo", "project_slug": "demo", "extra": "x"})
        return base, {**changed, "cookiecutter.json": more}
    return base, changed


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        ("answers", "the answers changed"),
        ("hook", "hooks folder"),
        ("include", "includes, imports or extends"),
        ("extends", "includes, imports or extends"),
        ("random", "random, uuid or time"),
        ("uuid", "random, uuid or time"),
        ("now", "random, uuid or time"),
        ("random filter", "random, uuid or time"),
        ("cookiecutter.json", "cookiecutter.json changed"),
    ],
)
def test_a_condition_not_met_renders_the_release_side_in_full(
    tmp_path: Path, case: str, reason: str
) -> None:
    template = tmp_path / "template"
    first, second = template_repo(template, list(_case(case)))
    record = record_at(template, first)
    hooks = HOOKS_SKIP if case == "hook" else HOOKS_REFUSE
    render_record(record, first, record.answers, hooks=hooks)
    answers = {**record.answers, "project_name": "Other"} if case == "answers" else record.answers
    incremental_before, full_before = counts()
    tree, _facts = render_record(record, second, answers, hooks=hooks)
    assert counts() == (incremental_before, full_before + 1)
    assert reason in cruft_incremental.FALLBACKS[-1]
    if case not in (
        "random",
        "uuid",
        "now",
        "random filter",
    ):  # the others differ from any other render
        expected = full_render(tmp_path, record_at(template, first, answers), second, hooks=hooks)
        assert snapshot(tree) == snapshot(expected)


def test_the_same_template_without_those_conditions_is_incremental(tmp_path: Path) -> None:
    """The control of the cases above: their template as it is renders incrementally."""
    template = tmp_path / "template"
    first, second = template_repo(template, list(_case("plain")))
    record = record_at(template, first)
    render_record(record, first, record.answers)
    incremental_before, _ = counts()
    render_record(record, second, record.answers)
    assert counts()[0] == incremental_before + 1


def test_a_baseline_render_missing_a_file_gives_a_full_render(tmp_path: Path) -> None:
    """The cache may be deleted at any time, also in part: an output the baseline's entry no
    longer holds is rendered, never left out."""
    template = tmp_path / "template"
    first, second = template_repo(template, list(_case("plain")))
    record = record_at(template, first)
    base_tree, _ = render_record(record, first, record.answers)
    (base_tree / "b.txt").unlink()
    incremental_before, full_before = counts()
    tree, _facts = render_record(record, second, record.answers)
    assert counts() == (incremental_before, full_before + 1)
    assert "lacks b.txt" in cruft_incremental.FALLBACKS[-1]
    assert snapshot(tree) == snapshot(full_render(tmp_path, record, second))
