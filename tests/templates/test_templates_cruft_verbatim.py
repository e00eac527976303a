"""A cookiecutter source without any Jinja syntax is written out as its own bytes instead of
being compiled and rendered: the output tree must be cookiecutter's own, byte for byte and
mode for mode, on the edge cases (CRLF, a lone CR, mixed newlines, no trailing newline, a
binary, non-UTF-8 bytes, an executable, ``{{`` in a copy-only file, template settings that
change how text renders). Real cookiecutter, real files in tmp_path."""

from __future__ import annotations

import importlib.util
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from builders import git, write_files
from tether.templates import cruft_render
from tether.templates.records import CRUFT, TemplateRecord

# cookiecutter is imported by the tests that run it, not when the module is collected: every
# test process collects every module, and most run none of these tests.
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("cookiecutter") is None, reason="the cruft extra is not installed"
)

SLUG = "{{cookiecutter.project_slug}}"
FILES: dict[str, str | bytes] = {
    f"{SLUG}/plain.txt": b"no jinja here\n",
    f"{SLUG}/crlf.txt": b"windows\r\nlines\r\n",
    f"{SLUG}/cr.txt": b"old mac\rlines\r",
    f"{SLUG}/mixed.txt": b"first\r\nthen\nand\r",
    f"{SLUG}/mixed_lf_first.txt": b"first\nthen\r\n",
    f"{SLUG}/no_newline.txt": b"no newline at the end",
    f"{SLUG}/empty.txt": b"",
    f"{SLUG}/bom.txt": b"\xef\xbb\xbfwith a byte order mark\n",
    f"{SLUG}/latin1.txt": b"caf\xe9 \xff\xfe bytes that are not UTF-8 \x00\x01\n",
    f"{SLUG}/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01\x00\xff\xfe",
    f"{SLUG}/binary_with_braces.bin": b"\x00\x01{{ x }}\x02\xff",
    f"{SLUG}/run.sh": b"#!/bin/sh\necho plain\n",
    f"{SLUG}/raw_copied.txt": b"{{ stays as written }}\r\n",
    f"{SLUG}/rendered.txt": b"# {{ cookiecutter.project_slug }}\r\nbody\n",
    f"{SLUG}/comment.txt": b"{# a comment #}text\n",
    f"{SLUG}/block.txt": b"{% if true %}yes{% endif %}\n",
    f"{SLUG}/hash_line.txt": b"## a line comment when asked\n%% if true\nyes\n%% endif\n",
    f"{SLUG}/nested/{SLUG}.cfg": b"plain text in a rendered name\n",
    f"{SLUG}/nested/deeper/keep.txt": b"trailing\n\n\n",
}
EXECUTABLES = (f"{SLUG}/run.sh",)
VERBATIM_EXPECTED = {
    "plain.txt",
    "crlf.txt",
    "cr.txt",
    "no_newline.txt",
    "empty.txt",
    "bom.txt",
    "run.sh",
    "hash_line.txt",
    os.path.join("nested", "deeper", "keep.txt"),
}


def make_template(root: Path, settings: dict[str, Any]) -> Path:
    context = {"project_slug": "demo", "_copy_without_render": ["raw_*"], **settings}
    write_files(root, {"cookiecutter.json": json.dumps(context), **FILES})
    for name in EXECUTABLES:
        (root / name).chmod(0o755)
    (root / SLUG / "plain.txt").chmod(0o600)
    return root


def render(template: Path, out: Path) -> Path:
    import cookiecutter.generate as generate
    import cookiecutter.prompt as prompt

    context = generate.generate_context(context_file=str(template / "cookiecutter.json"))
    context["cookiecutter"] = prompt.prompt_for_config(context, True)
    out.mkdir()
    return Path(
        generate.generate_files(repo_dir=str(template), context=context, output_dir=str(out))
    )


def snapshot(root: Path) -> dict[str, tuple[int, bytes]]:
    found = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        rel = str(path.relative_to(root))
        found[rel] = (stat.S_IMODE(info.st_mode), path.read_bytes() if path.is_file() else b"")
    return found


SETTINGS = {
    "default": {},
    "newlines asked for": {"_new_lines": "\r\n"},
    "line prefixes": {
        "_jinja2_env_vars": {"line_statement_prefix": "%%", "line_comment_prefix": "##"}
    },
    "Jinja's newlines": {"_jinja2_env_vars": {"newline_sequence": "\r\n"}},
    "other delimiters": {
        "_jinja2_env_vars": {
            "block_start_string": "<%",
            "block_end_string": "%>",
            "comment_start_string": "<#",
            "comment_end_string": "#>",
        }
    },
}


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_a_render_with_verbatim_sources_is_cookiecutters_own_byte_for_byte(
    tmp_path: Path, name: str
) -> None:
    template = make_template(tmp_path / "template", SETTINGS[name])
    own = snapshot(render(template, tmp_path / "own"))
    cruft_render.VERBATIM.clear()
    with cruft_render._shared_work():
        shared = snapshot(render(template, tmp_path / "shared"))
    assert shared == own
    assert own["plain.txt"][0] == 0o600 and own["run.sh"][0] & 0o111
    written = set(cruft_render.VERBATIM)
    if name == "default":
        assert own["crlf.txt"][1] == b"windows\r\nlines\r\n"
        # why mixed newlines are not verbatim: cookiecutter writes them all one way
        assert own["mixed.txt"][1] != FILES[f"{SLUG}/mixed.txt"]
        assert written == VERBATIM_EXPECTED
    elif name == "other delimiters":
        # ``{%`` and ``{#`` are plain text there: those sources are verbatim too
        assert written == VERBATIM_EXPECTED | {"block.txt", "comment.txt"}
    else:
        assert written == set(), "a setting that changes how text renders: cookiecutter's own path"


def test_a_cruft_render_writes_sources_verbatim_and_matches_cookiecutter(
    tmp_path: Path, render_cache: Path
) -> None:
    template = tmp_path / "repo"
    make_template(template, {})
    git(template, "init", "-q", "-b", "main")
    git(template, "add", "-A")
    git(template, "commit", "-qm", "v1")
    commit = git(template, "rev-parse", "HEAD").strip()
    (template / SLUG / "plain.txt").chmod(0o644)  # git keeps only 644 and 755
    record = TemplateRecord(
        kind=CRUFT,
        path=".cruft.json",
        src=str(template),
        commit=commit,
        answers={"project_slug": "demo"},
        raw=b"{}",
    )
    cruft_render.VERBATIM.clear()
    dest = tmp_path / "rendered"
    cruft_render.render(record, commit, {"project_slug": "demo"}, dest)
    assert set(cruft_render.VERBATIM) == VERBATIM_EXPECTED
    assert snapshot(dest) == snapshot(render(template, tmp_path / "own"))
