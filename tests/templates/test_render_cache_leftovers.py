"""The render cache's scratch folders (``.building-``) and broken entries set aside
(``.broken-``) left by a process killed while rendering are removed by the next render; what
a live process is using, and what tether did not make, is left alone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from tether.templates import render_cache
from tether.templates.render_cache import cached_render

# A render that writes a file into its scratch tree, says so, and never ends.
HANGING_RENDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from tether.templates.render_cache import cached_render
    home, marker = Path(sys.argv[1]), Path(sys.argv[2])
    def build(tree):
        tree.mkdir()
        (tree / "README.md").write_text("half a render\\n")
        marker.write_text("rendering\\n")
        time.sleep(600)
        return {}
    cached_render("k" * 40, build, home)
    """
)


def _wait_for(marker: Path, child: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert child.poll() is None, "the render ended before it began writing"
        assert time.monotonic() < deadline, "the render never began"
        time.sleep(0.02)


def _render_readme(tree: Path) -> dict[str, Any]:
    tree.mkdir()
    (tree / "README.md").write_text("rendered\n")
    return {"commit": "c"}


def _dead_pid() -> int:
    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(finished.stdout)


def test_a_killed_renders_scratch_folder_is_removed_by_the_next_render(tmp_path: Path) -> None:
    home = tmp_path / "renders"
    marker = tmp_path / "rendering"
    child = subprocess.Popen(
        [sys.executable, "-c", HANGING_RENDER, str(home), str(marker)],
        stdin=subprocess.DEVNULL,
    )
    try:
        _wait_for(marker, child)
        [scratch] = [p for p in home.iterdir() if p.name.startswith(".building-")]
        # while it lives, another render leaves its folder alone
        cached_render("a" * 40, _render_readme, home)
        assert (scratch / "tree" / "README.md").read_text() == "half a render\n"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    tree, facts, from_cache = cached_render("b" * 40, _render_readme, home)
    assert not from_cache and facts == {"commit": "c"}
    assert (tree / "README.md").read_text() == "rendered\n"
    assert not scratch.exists()
    assert sorted(p.name for p in home.iterdir()) == ["a" * 40, "b" * 40]


def test_only_folders_under_tethers_names_of_gone_processes_here_are_removed(
    tmp_path: Path,
) -> None:
    home = tmp_path / "renders"
    home.mkdir()
    here = render_cache._machine_tag()
    other_machine = "0" * 8 if here != "0" * 8 else "1" * 8
    gone, live = _dead_pid(), os.getppid()
    key = "c" * 40
    removed = [
        f".building-{gone}-{here}-abcd_123",
        f".broken-{gone}-{here}-{key}-0123abcd",
        f".broken-{key}-89abcdef",  # set aside by a tether that named no process
    ]
    kept_folders = [
        f".building-{live}-{here}-abcd_123",  # a live process's render
        f".building-{gone}-{other_machine}-abcd_123",  # a pid of another machine
        ".building-abcd_123",  # a tether that named no process may still be rendering
        f".building-{gone}-{here}-abcd_123-x",  # not a name tether makes
        ".building-0-00000000-abcd_123",
        f".broken-{gone}-{here}-{key}",
    ]
    for name in removed + kept_folders:
        (home / name).mkdir()
        (home / name / "f").write_text("x\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f").write_text("not tether's\n")
    link = f".building-{gone}-{here}-link_123"
    (home / link).symlink_to(outside)
    a_file = f".broken-{gone}-{here}-{key}-fedcba98"
    (home / a_file).write_text("a file under one of tether's names\n")

    cached_render("d" * 40, _render_readme, home)

    left = {p.name for p in home.iterdir()}
    assert left == {*kept_folders, link, a_file, "d" * 40}
    assert all((home / name / "f").read_text() == "x\n" for name in kept_folders)
    assert (home / link).is_symlink() and (outside / "f").read_text() == "not tether's\n"
    assert (home / a_file).read_text() == "a file under one of tether's names\n"
